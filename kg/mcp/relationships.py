"""MCP tools for relationships over time: who or what a subject was related to at a moment
(`relationships_as_of`), and `relate` (assert or end one)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from kg.core.models.limits import Timestamp
from kg.core.models.relationships import RelateResult, RelationshipView
from kg.core.models.requests import Op
from kg.core.models.turns import instant
from kg.core.vocabulary import Trust
from kg.mcp.door import Door


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def relationships_as_of(namespace: str, subject: str, ctx: Context, type: str | None = None,
                                  as_of: Timestamp | None = None,
                                  known_at: Timestamp | None = None) -> list[RelationshipView]:
        """Who or what `subject` was related to (e.g. works_for, knows) at `as_of` (default now), as
        the memory believed it at `known_at` (default now)."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.relationships(namespace, subject, type, instant(as_of), instant(known_at))

    @server.tool()
    async def relate(namespace: str, subject: str, type: str, object: str, ctx: Context,
                     valid_from: Timestamp | None = None, op: Op = "assert",
                     trust: Trust | None = None) -> RelateResult:
        """Record (`assert`) or end (`retract`) the relationship `subject -[type]-> object` from
        `valid_from` (default now). A new object of a one-to-one type (works_for, married_to, ...)
        ends the subject's previous one; other types end only by a retraction. `trust` "untrusted":
        it never ends a trusted relationship until `confirm`."""
        memory = await door.open(ctx, namespace)
        return await memory.relate(namespace, subject, type, object, valid_from=instant(valid_from), op=op,
                                   trust=door.trust(ctx, trust))
