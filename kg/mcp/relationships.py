"""MCP tools for relationships over time, added to the server `kg.mcp.build_server` builds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer

from kg.core.models.limits import Timestamp
from kg.core.models.turns import instant
from kg.core.models.relationships import RelateResult, RelationshipView
from kg.core.models.vocabulary import Trust

if TYPE_CHECKING:
    from kg.memory import AsyncMemory


def add_tools(server: MCPServer, open_: Callable[[Context, str], Awaitable["AsyncMemory"]],
              trust_of: Callable[[Context, Trust | None], Trust]) -> None:
    """`open_(ctx, namespace)`: the memory, once the caller may use the namespace; `trust_of(ctx,
    asked)`: what the caller's write is stored as (`Door.trust`)."""

    @server.tool()
    async def relationships_as_of(namespace: str, subject: str, ctx: Context, type: str | None = None,
                                  as_of: Timestamp | None = None,
                                  known_at: Timestamp | None = None) -> list[RelationshipView]:
        """Who or what `subject` was related to (e.g. works_for, knows) at `as_of` (default now), as
        the memory believed it at `known_at` (default now)."""
        return await (await open_(ctx, namespace)).relationships(namespace, subject, type, instant(as_of), instant(known_at))

    @server.tool()
    async def relate(namespace: str, subject: str, type: str, object: str, ctx: Context,
                     valid_from: Timestamp | None = None,
                     op: Literal["assert", "retract"] = "assert", trust: Trust | None = None) -> RelateResult:
        """Record (`assert`) or end (`retract`) the relationship `subject -[type]-> object` from
        `valid_from` (default now). A new object of a one-to-one type (works_for, married_to, ...)
        ends the subject's previous one; other types end only by a retraction. `trust` "untrusted":
        it never ends a trusted relationship until `confirm`."""
        memory = await open_(ctx, namespace)
        return await memory.relate(namespace, subject, type, object, valid_from=instant(valid_from), op=op,
                                   trust=trust_of(ctx, trust))
