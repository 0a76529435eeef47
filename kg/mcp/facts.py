"""MCP tools for facts, corrections and forgetting: fact history, add a correction, confirm a
rule, and `forget` (erase a session, a subject or the namespace; see docs/forgetting.md)."""

from __future__ import annotations

from kg.core.models.limits import Timestamp
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from kg.core.models.corrections import CorrectionResult, CorrectionType, CorrectionView
from kg.core.models.facts import FactView
from kg.core.models.turns import Erasure

from kg.core.models.turns import instant
from kg.core.models.vocabulary import Trust
from kg.mcp.door import Door


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def fact_history(namespace: str, subject: str, ctx: Context, predicate: str | None = None,
                           known_at: Timestamp | None = None, include_expired: bool = False) -> list[FactView]:
        """Every interval of the subject's facts in valid-time order, with what superseded each, as
        believed at `known_at` (default now); `include_expired`: also the versions belief replaced."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.history(namespace, subject, predicate, instant(known_at), include_expired)

    @server.tool()
    async def add_correction(
        namespace: str, session_id: Annotated[str, Field(min_length=1, max_length=200)],
        rule_text: Annotated[str, Field(min_length=1, max_length=4000)], ctx: Context,
        original_behavior: Annotated[str | None, Field(max_length=4000)] = None,
        corrected_behavior: Annotated[str | None, Field(max_length=4000)] = None,
        correction_type: CorrectionType = "preference", seen_at: Timestamp | None = None,
        evidence_turn_ids: Annotated[list[str], Field(max_length=1000)] = [],  # noqa: B006 - pydantic copies it
        confidence: Annotated[float | None, Field(gt=0, le=1)] = None, trust: Trust | None = None,
    ) -> CorrectionResult:
        """Record that the user corrected the agent in `session_id` ("use uv, not pip"); it is added,
        reinforces a similar one, or invalidates a contradicted one, and graduates towards a rule.
        `trust` "untrusted" (from a tool, a page, another agent): it never does any of that to a
        trusted one, nor becomes a rule, until `confirm`."""
        memory = await door.open(ctx, namespace)
        try:
            return await memory.add_correction(namespace, session_id, rule_text, original_behavior,
                                               corrected_behavior, correction_type, instant(seen_at),
                                               evidence_turn_ids, confidence, door.trust(ctx, trust))
        except ValueError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def confirm_rule(namespace: str, correction_id: str, ctx: Context) -> CorrectionView:
        """The user explicitly confirmed a correction: it becomes a rule."""
        memory = await door.open(ctx, namespace, existing=True)
        try:
            return await memory.confirm_rule(namespace, correction_id)
        except KeyError as exc:
            raise ToolError(exc.args[0]) from None

    @server.tool()
    async def forget(namespace: str, scope: Literal["session", "turn", "subject", "namespace"], target: str,
                     ctx: Context) -> Erasure:
        """Erase for good (unlike `remember` with op "retract", which keeps history), and undo what it
        caused (a fact it ended holds again): `scope` "session" (target: the session id) deletes its
        turns, summaries, and the facts and corrections only it evidenced; "turn" (target: the turn
        id) one message; "subject" (target: the subject's name) every fact and event about it;
        "namespace" (target: the namespace's name again, as confirmation) everything. Leaves only a
        content-free erasure record, which it returns."""
        memory = await door.open(ctx, namespace, existing=True)
        by = door.by(ctx)
        try:
            if scope == "session":
                return await memory.erase_session(namespace, target, by)
            if scope == "turn":
                return await memory.erase_turn(namespace, target, by)
            if scope == "subject":
                return await memory.erase_subject(namespace, target, by)
            if target != namespace:
                raise ToolError("target: to erase a whole namespace, repeat its name as the target")
            return await memory.erase_namespace(namespace, by)
        except KeyError as exc:
            raise ToolError(exc.args[0]) from None
        except ValueError as exc:
            raise ToolError(str(exc)) from None
