"""MCP tool errors that carry their reason, the same text HTTP answers with its 422 or 503.

The SDK reports any exception other than `ToolError` as a crash and hides its text ("Error executing
tool X"). A refused value (`FieldError`, or the `ValueError` a writer raises) and a database outage
are not crashes: the caller can correct the one and retry the other, so each keeps its reason.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from kg.core.models.limits import FieldError
from kg.core.telemetry.hooks import root_span

RETRY_AFTER_S = 5  # as HTTP's 503 `Retry-After`
UNAVAILABLE = f"database_unavailable: the database cannot be reached; retry after {RETRY_AFTER_S} s"


def reason(exc: BaseException) -> str | None:
    """The text a caller may read for `exc`, or None for a crash (its text stays on the server)."""
    # imported here: `kg mcp` answers `initialize` before the driver is loaded, and any of these
    # errors comes from code that has loaded it by then
    from kg.core.store.store import unavailable

    if unavailable(exc):
        return UNAVAILABLE
    if isinstance(exc, FieldError):
        return f"invalid_request: {exc.field}: {exc.message}"
    if isinstance(exc, ValueError):
        return f"invalid_request: {exc}"
    return None


class ReasonedServer(MCPServer):
    """The server whose tool calls keep their reasons, each call in a span (`execute_tool <tool>`,
    with tracing on) under the HTTP request's when it came over HTTP."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        tool = name if self._tool_manager.get_tool(name) is not None else "unknown"  # never the caller's text
        attributes = (("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", tool))
        with root_span(f"execute_tool {tool}", attributes):
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError as exc:
                cause = exc.__cause__
                text = reason(cause) if cause is not None else None
                if text is None:
                    raise
                raise ToolError(f"Error executing tool {name}: {text}") from cause
