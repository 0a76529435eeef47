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
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Literal, Sequence

from kg.core.extras import package_version, require

require("server", "mcp", "starlette")

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402 - after the check that names the extra
from mcp.server.mcpserver.exceptions import ToolError
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from kg.mcp import facts, relationships, review, sessions
from kg.mcp.door import Door, LocalScope, Scope
from kg.core.models.turns import instant
from kg.access import AccessDenied, Keyring
from kg.core.settings.tree import Settings
from kg.core.heap import bound_heap, calm_collector
from kg.core.models.corrections import CoreRules
from kg.core.models.facts import FactView, RememberResult
from kg.core.models.limits import QueryText, Timestamp
from kg.mcp.errors import ReasonedServer
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit
from kg.core.models.vocabulary import K, RecipeChoice, Trust

if TYPE_CHECKING:
    from fastapi import FastAPI

    from kg.memory import AsyncMemory

INSTRUCTIONS = (
    "Long-term memory of past conversations. Search it before answering questions about earlier "
    "sessions, record durable facts with `remember`, and follow `core_rules` (the user's standing "
    "corrections). Every tool works inside one namespace."
)


def build_server(scope: Scope, lifespan: Callable[[MCPServer], Any] | None = None) -> MCPServer:
    server = ReasonedServer("kg-memory", version=package_version(), instructions=INSTRUCTIONS, lifespan=lifespan,
                            log_level="WARNING")

    door = Door(scope)
    open_ = door.check  # noqa: F841 - the plain (ctx, namespace) -> memory form other tool modules take

    @server.tool()
    async def search_turns(namespace: str, query: QueryText, ctx: Context, k: K = 10,
                           recipe: RecipeChoice | None = None, as_of: Timestamp | None = None,
                           now: Timestamp | None = None) -> list[RankedTurn]:
        """Past conversation turns that best answer `query`, best first, by the memory's default
        retriever (hierarchical: words, meaning, speakers and dates, session by session) unless
        `recipe` names another (flat: by meaning only; bm25: by words only). `k`: 1 to 100. `as_of`
        hides later turns; `now`: when the question is asked ("last month" counts back from it;
        default as_of, else the present). Hits with `degraded: true` were found while the embedding
        model was down, by words and a fallback model only (`degraded_reason` says why): a relevant
        turn may be missing."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.search_turns(namespace, query, k, recipe, instant(as_of), instant(now))

    @server.tool()
    async def search_sessions(namespace: str, query: QueryText, ctx: Context, k: K = 5,
                              recipe: RecipeChoice | None = None, as_of: Timestamp | None = None,
                              now: Timestamp | None = None) -> list[SessionHit]:
        """Past sessions about `query` ("what did we discuss about X?"), each with its summary and
        best-matching turns, best first (`recipe`, `as_of`, `now`: as for search_turns)."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.search_sessions(namespace, query, k, recipe, instant(as_of), instant(now))

    @server.tool()
    async def search_memories(namespace: str, query: QueryText, ctx: Context, k: K = 10,
                              as_of: Timestamp | None = None, now: Timestamp | None = None) -> list[MemoryHit]:
        """Facts and turns about `query` ("what did we decide about X?"), one score each."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.search_memories(namespace, query, k, instant(as_of), instant(now))

    @server.tool()
    async def recall(namespace: str, query: QueryText, ctx: Context, k: K = 10,
                     as_of: Timestamp | None = None, now: Timestamp | None = None) -> list[MemoryHit]:
        """Turns, facts and summaries relevant to `query`, ranked by one score (similarity, closeness
        to the entities it names, fact confidence); superseded facts left out. `as_of`: as at that
        moment; `now`: when the question is asked."""
        memory = await door.open(ctx, namespace, existing=True)
        return await memory.recall(namespace, query, k, instant(as_of), instant(now))

    @server.tool()
    async def remember(namespace: str, subject: str, predicate: str, object: str, ctx: Context,
                       valid_from: Timestamp | None = None, op: Literal["assert", "retract"] = "assert",
                       source: Literal["stated", "observed", "inferred", "system"] = "stated",
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
    async def core_rules(namespace: str, ctx: Context) -> CoreRules:
        """The user's standing rules and strong preferences (from past corrections), strongest first."""
        return await (await door.open(ctx, namespace, existing=True)).core_rules(namespace)

    sessions.register(server, door)
    facts.register(server, door)
    review.register(server, door)
    relationships.add_tools(server, open_, door.trust)
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
