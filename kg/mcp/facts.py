"""MCP tools for facts over time: `remember` (assert or retract), what held at a moment
(`facts_as_of`) and every interval with what superseded it (`fact_history`)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from kg.core.models.facts import FactView, RememberResult
from kg.core.models.limits import Timestamp
from kg.core.models.requests import Op, Source
from kg.core.models.turns import instant
from kg.core.vocabulary import Trust
from kg.mcp.door import Door


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def remember(namespace: str, subject: str, predicate: str, object: str, ctx: Context,
                       valid_from: Timestamp | None = None, op: Op = "assert", source: Source = "stated",
                       trust: Trust | None = None) -> RememberResult:
        """Record (`assert`) or withdraw (`retract`) the fact `subject predicate object`, true from
        `valid_from` (default now). A new value of a single-valued predicate supersedes the old one.
        `trust` "untrusted" (tool output, a web page, another agent): it never changes a trusted fact
        (`held`) until `confirm`."""
        memory = await door.open(ctx, namespace)
        return await memory.remember(namespace, subject, predicate, object, valid_from=instant(valid_from), op=op,
                                     source=source, trust=door.trust(ctx, trust))

    @server.tool()
    async def facts_as_of(namespace: str, subject: str, ctx: Context, predicate: str | None = None,
                          as_of: Timestamp | None = None, known_at: Timestamp | None = None) -> list[FactView]:
        """What was true of `subject` at `as_of` (default now), as the memory believed it at `known_at`."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.facts(namespace, subject, predicate, instant(as_of), instant(known_at))

    @server.tool()
    async def fact_history(namespace: str, subject: str, ctx: Context, predicate: str | None = None,
                           known_at: Timestamp | None = None, include_expired: bool = False) -> list[FactView]:
        """Every interval of the subject's facts in valid-time order, with what superseded each, as
        believed at `known_at` (default now); `include_expired`: also the versions belief replaced."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.history(namespace, subject, predicate, instant(known_at), include_expired)
