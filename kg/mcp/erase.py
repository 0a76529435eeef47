"""The MCP tool `forget`: erase a session, a turn, a subject or the namespace for good, leaving a
content-free erasure record (see docs/forgetting.md)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from kg.core.models.turns import EraseScope, Erasure
from kg.mcp.door import Door


def register(server: MCPServer, door: Door) -> None:
    @server.tool()
    async def forget(namespace: str, scope: EraseScope, target: str, ctx: Context) -> Erasure:
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
