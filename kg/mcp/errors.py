"""MCP tool errors that carry their reason, the same text HTTP answers with its 422 or 503.

The SDK reports any exception other than `ToolError` as a crash and hides its text ("Error executing
tool X"). A refused value (`FieldError`, or the `ValueError` a writer raises) and a database outage
are not crashes: the caller can correct the one and retry the other, so each keeps its reason.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from kg.core.limits import FieldError
from kg.core.store import unavailable

RETRY_AFTER_S = 5  # as HTTP's 503 `Retry-After`
UNAVAILABLE = f"database_unavailable: the database cannot be reached; retry after {RETRY_AFTER_S} s"


def reason(exc: BaseException) -> str | None:
    """The text a caller may read for `exc`, or None for a crash (its text stays on the server)."""
    if unavailable(exc):
        return UNAVAILABLE
    if isinstance(exc, FieldError):
        return f"invalid_request: {exc.field}: {exc.message}"
    if isinstance(exc, ValueError):
        return f"invalid_request: {exc}"
    return None


class ReasonedServer(MCPServer):
    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__
            text = reason(cause) if cause is not None else None
            if text is None:
                raise
            raise ToolError(f"Error executing tool {name}: {text}") from cause
