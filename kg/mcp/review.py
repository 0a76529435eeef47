"""MCP tools to review what changed (docs/trust.md): `why` a fact or relationship is what it is,
the `changes` since a moment, `revert` one (a new event; nothing rewritten) and `confirm` an
untrusted statement."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from kg.core.models.limits import FieldError, Timestamp
from kg.core.models.trust import ChangeResult, Changes, Explanation
from kg.core.models.turns import instant
from kg.mcp.door import Door


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def why(namespace: str, id: str, ctx: Context) -> Explanation:
        """Why a fact version (`fact_...`, from facts_as_of or fact_history) or relationship version
        (`rel_...`) is current, ended, superseded or expired: the chain of events of its
        subject+predicate, each with its source, time, trust, confidence and the turns it quotes."""
        memory = await door.open(ctx, namespace, existing=True)
        try:
            return await memory.explain(namespace, id)
        except KeyError as exc:  # no such fact or relationship
            raise ToolError(exc.args[0]) from None

    @server.tool()
    async def changes(namespace: str, ctx: Context, since: Timestamp | None = None,
                      limit: Annotated[int, Field(ge=1, le=1000)] = 100) -> Changes:
        """What changed a statement since `since` (default: ever), newest first: supersessions,
        retractions, untrusted statements held for confirmation, withdrawals, rewinds (erases),
        reverts, confirmations, and corrections invalidated automatically, each with its confidence."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.changes(namespace, instant(since), limit)

    async def change(ctx: Context, namespace: str, what: str, id: str) -> ChangeResult:
        memory = await door.open(ctx, namespace, existing=True)
        try:
            return await getattr(memory, what)(namespace, id, door.by(ctx))
        except KeyError as exc:
            raise ToolError(exc.args[0]) from None
        except FieldError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def revert(namespace: str, event_id: str, ctx: Context) -> ChangeResult:
        """Undo one automatic change by recording a new event: a supersession or retraction (the old
        value holds again), a withdrawal, revert or confirmation, or a correction's invalidation."""
        return await change(ctx, namespace, "revert", event_id)

    @server.tool()
    async def confirm(namespace: str, id: str, ctx: Context) -> ChangeResult:
        """A person confirms an untrusted statement (its event id, from `changes` or what remember
        answered), correction or held entity merge (`mrg_...`): from now on it counts as trusted
        and is handled like any other."""
        return await change(ctx, namespace, "confirm", id)
