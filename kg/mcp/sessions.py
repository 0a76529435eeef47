"""MCP tools for conversations: add messages and turns (validated item by item, as HTTP does),
list sessions, read one, close it (its summary), read its summaries."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from kg.batch import BatchResult, validate_items
from kg.core.models.recall import Summary
from kg.core.models.turns import Session, SessionTurns
from kg.mcp.door import Door

SessionId = Annotated[str, Field(min_length=1, max_length=200)]


async def _store(door: Door, ctx: Context, namespace: str, items: list[Any], field: str,
                 session_id: str | None = None) -> BatchResult:
    memory = await door.open(ctx, namespace)
    try:
        messages, results = validate_items(memory.settings, namespace, items, field, session_id,
                                           door.trust(ctx, None))
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    rejected = [r for r in results if r.status == "rejected"]
    if not messages:
        first = rejected[0].errors[0]
        raise ToolError(f"no valid item: {first.field}: {first.message}")
    report = await memory.ingest(messages)
    return BatchResult(received=len(items), accepted=len(messages), rejected=len(rejected), written=report.written,
                       existing=report.existing, sessions=report.sessions, items=results)


async def _session(door: Door, ctx: Context, namespace: str, session_id: str) -> tuple[Any, Session]:
    memory = await door.open(ctx, namespace, existing=True)
    session = await memory.session(namespace, session_id)
    if session is None:
        raise ToolError(f"no session {session_id!r} in {namespace!r}")
    return memory, session


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def add_messages(namespace: str, messages: list[dict[str, Any]], ctx: Context) -> BatchResult:
        """Store messages; one without `session_id` joins the namespace's current session, or opens a
        new one after the time gap. Each item is accepted or rejected on its own (with its errors); the
        valid ones are stored. Idempotent. Each item: {role: user|assistant|system|tool, text, ts (ISO
        8601), speaker?, session_id?, external_id?, trust?: "untrusted" for tool output, a web page or
        another agent's message (stored and searchable, never changes a trusted statement)}."""
        if not messages:
            raise ToolError("messages: at least one item")
        return await _store(door, ctx, namespace, messages, "messages")

    @server.tool()
    async def add_turns(namespace: str, session_id: SessionId, turns: list[dict[str, Any]],
                        ctx: Context) -> BatchResult:
        """Store (or extend) one session's turns, validated item by item like `add_messages`. Idempotent."""
        if not turns:
            raise ToolError("turns: at least one item")
        return await _store(door, ctx, namespace, turns, "turns", session_id)

    @server.tool()
    async def list_sessions(namespace: str, ctx: Context,
                            limit: Annotated[int, Field(ge=1, le=1000)] = 20) -> list[Session]:
        """The latest sessions of the namespace, newest first."""
        return await (await door.open(ctx, namespace, existing=True)).sessions(namespace, limit)

    @server.tool()
    async def get_session(namespace: str, session_id: str, ctx: Context) -> SessionTurns:
        """One session and its turns in order."""
        memory, session = await _session(door, ctx, namespace, session_id)
        return SessionTurns(session=session, turns=await memory.turns(namespace, session_id))

    @server.tool()
    async def close_session(namespace: str, session_id: str, ctx: Context) -> Summary:
        """Close the session and summarize it; the summary replaces the previous one (version + 1)."""
        memory, _ = await _session(door, ctx, namespace, session_id)
        summary = await memory.close_session(namespace, session_id)
        if summary is None:
            raise ToolError(f"session {session_id!r} has no turns")
        return summary

    @server.tool()
    async def get_summaries(namespace: str, session_id: str, ctx: Context,
                            include_expired: bool = False) -> list[Summary]:
        """The session's current summaries (session, windows, rollups); `include_expired`: also the
        versions they replaced."""
        memory, _ = await _session(door, ctx, namespace, session_id)
        return await memory.summaries(namespace, session_id, include_expired)
