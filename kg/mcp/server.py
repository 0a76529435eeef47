"""The MCP server (official `mcp` SDK): memory tools for agents, over stdio (`kg mcp`) or
streamable HTTP (`/mcp` of the HTTP API, `kg.http`).

Every tool takes the namespace it works in. Over HTTP the caller's `X-API-Key` decides which
namespaces it may use, exactly as for the REST routes; over stdio `kg mcp --namespace ...`
limits them (none given: all, since the local user owns the database anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Sequence

from kg.core.extras import package_version, require

require("server", "mcp", "starlette")

from mcp.server.mcpserver import MCPServer
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from kg.access import AccessDenied, Keyring
from kg.core.heap import bound_heap, calm_collector
from kg.core.settings.tree import Settings
from kg.mcp import corrections, erase, facts, relationships, review, search, sessions
from kg.mcp.door import Door, LocalScope, Scope
from kg.mcp.errors import ReasonedServer

if TYPE_CHECKING:
    from fastapi import FastAPI

    from kg.memory import AsyncMemory

INSTRUCTIONS = (
    "Long-term memory of past conversations. Search it before answering questions about earlier "
    "sessions, record durable facts with `remember`, and follow `core_rules` (the user's standing "
    "corrections). Every tool works inside one namespace."
)
# The tools by subject, each module's `register(server, door)`: the same subjects as HTTP's and the CLI's.
SUBJECTS = (search, sessions, facts, corrections, relationships, erase, review)


def build_server(scope: Scope, lifespan: Callable[[MCPServer], Any] | None = None) -> MCPServer:
    server = ReasonedServer("kg-memory", version=package_version(), instructions=INSTRUCTIONS, lifespan=lifespan,
                            log_level="WARNING")

    door = Door(scope)
    for subject in SUBJECTS:
        subject.register(server, door)
    return server


def mount(app: "FastAPI", server: MCPServer, settings: Settings) -> None:
    """Serve `server` at `/mcp` of the API app (stateless streamable HTTP, JSON responses); the
    app's lifespan runs `server.session_manager`."""
    starlette = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                           host=settings.http.host)
    app.router.routes.extend(starlette.routes)
    app.add_middleware(KeyGate, keyring=app.state.keyring)


class KeyGate:
    """With keys configured, `/mcp` answers only known keys (401 otherwise); which namespaces a
    key may use is checked by each tool."""

    def __init__(self, app: ASGIApp, keyring: Keyring) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") == "/mcp":
            try:
                self.keyring.grant(Headers(scope=scope).get("x-api-key"))
            except AccessDenied as exc:
                body = {"error": "unauthorized", "message": exc.message,
                        "detail": [{"field": "X-API-Key", "message": exc.message}]}
                await JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "X-API-Key"})(
                    scope, receive, send)
                return
        await self.app(scope, receive, send)


def run_stdio(settings: Settings, namespaces: Sequence[str] = ()) -> None:
    """`kg mcp`: serve the tools over stdin/stdout until the client disconnects.

    The client's `initialize` is answered at once: the facade is imported, the database opened and
    the model loaded in the background, and the first tool call waits only for what is left."""
    tracing: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if settings.telemetry.tracing:  # OpenTelemetry is imported only then
        from kg.core.telemetry.tracing import Tracing

        tracing = Tracing(settings.telemetry)

    async def open_memory() -> AsyncMemory:
        # imported in a thread: the event loop stays free to answer `initialize` meanwhile
        facade = await asyncio.to_thread(importlib.import_module, "kg.memory")
        memory: AsyncMemory = facade.AsyncMemory(settings)
        await memory.open(warm=True)
        calm_collector()  # `kg mcp` is a process of its own (kg.core.heap)
        return memory

    scope = LocalScope(namespaces, opener=open_memory)
    bound_heap()  # `kg mcp` is a process of its own (kg.core.heap)

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        with tracing:
            scope.start()
            try:
                yield
            finally:
                await scope.close()

    build_server(scope, lifespan).run("stdio")
