"""The HTTP API: `create_app(settings)` builds a FastAPI app around one `AsyncMemory`.

Every memory route lives under `/v1/namespaces/{namespace}`; a request passes the API-key check
(`kg.access`) for that namespace before it touches the database. Errors are JSON:
`{"error": code, "message": summary, "detail": [{"field": ..., "message": ...}]}`. Each subject's
module (`SUBJECTS`: `kg.http.operations` for health, readiness and metrics, `.sessions`, `.search`,
`.facts`, ...) holds its own router, which its `register(app)` includes; the MCP endpoint (`/mcp`,
streamable HTTP) comes from `kg.mcp.server`.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, AsyncIterator

from kg.core.extras import require

require("server", "fastapi", "starlette", "mcp", "prometheus_client")

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kg.access import AccessDenied, Keyring
from kg.batch import validation_detail
from kg.core.heap import bound_heap, calm_collector
from kg.core.models.limits import FieldError
from kg.core.settings.tree import Settings, load_settings
from kg.core.store.store import StoreError, unavailable
from kg.http import (
    corrections,
    erase,
    export,
    facts,
    history,
    jobs,
    operations,
    relationships,
    review,
    search,
    sessions,
)
from kg.http.asgi import HttpMiddleware, StatusWatch
from kg.http.backpressure import Backpressure
from kg.http.common import API_VERSION, error_response
from kg.http.metrics import Metrics, RequestMetrics
from kg.http.traces import RequestSpans
from kg.mcp import server as mcp
from kg.mcp.door import HttpScope
from kg.memory import AsyncMemory

if TYPE_CHECKING:
    from kg.core.telemetry.tracing import Tracing

log = logging.getLogger(__name__)
RETRY_AFTER_S = 5  # what a 503 tells the client to wait
# The routes by subject, each module's `register(app)`: /health, /ready and /metrics, then the rest
# under /v1/namespaces/{namespace}; the same subjects as `kg.mcp` and `kg.cli`.
SUBJECTS = (operations, sessions, search, facts, corrections, relationships, erase, review, export, history, jobs)


def create_app(settings: Settings | None = None, memory: AsyncMemory | None = None,
               own_process: bool = False) -> FastAPI:
    """The API app. Its lifespan opens one `AsyncMemory` (or uses `memory`, left open afterwards).
    `own_process`: the process is the service's alone (`default_app`), so once the model is loaded
    its garbage collector is tuned for it (`kg.core.heap.calm_collector`)."""
    settings = settings or load_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = memory is None
        mem = memory or AsyncMemory(settings)
        if own:
            # the first request does not pay the model load; a database still starting (or down)
            # answers 503 until it can be reached
            await mem.start(warm=True)
            if own_process:
                calm_collector()  # start-up's objects out of the collector's sight (kg.core.heap)
        app.state.memory = mem
        metrics = getattr(app.state, "metrics", None)
        if metrics is not None:
            metrics.start()
        if tracing is not None:
            tracing.start()
        try:
            async with mcp_server.session_manager.run():
                yield
        finally:
            if tracing is not None:
                tracing.stop()
            if metrics is not None:
                metrics.stop()
            if own:
                await mem.close()

    tracing = _tracing(settings)
    app = FastAPI(
        title="kg-memory",
        version=API_VERSION,
        summary="Long-term, bi-temporal conversational memory for AI agents, on Neo4j.",
        lifespan=lifespan,
        # FastAPI's own spans (with a global tracer provider) would hold the path and the query
        # string, so a namespace and user text; the request spans are kg's (kg.http.traces)
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    mcp_server = mcp.build_server(HttpScope(app))
    app.state.settings = settings
    app.state.keyring = Keyring(settings.http.keys, settings.http.untrusted_keys)
    app.state.known_namespaces = set()
    app.add_middleware(BodyLimit, max_bytes=settings.http.max_body_bytes)
    _install_error_handlers(app)
    app.add_middleware(Backpressure, settings=settings.http)
    for subject in SUBJECTS:
        subject.register(app)
    mcp.mount(app, mcp_server, settings)
    if settings.http.metrics:  # outermost, so that refusals are counted too
        app.state.metrics = Metrics()
        app.add_middleware(RequestMetrics, metrics=app.state.metrics)
    if tracing is not None:
        app.add_middleware(RequestSpans, routes=app.router.routes)
    return app


def _tracing(settings: Settings) -> "Tracing | None":
    """The app's `kg.core.telemetry.tracing.Tracing` when `[telemetry] tracing` is on (OpenTelemetry is
    imported only then), else None."""
    if not settings.telemetry.tracing:
        return None
    from kg.core.telemetry.tracing import Tracing

    return Tracing(settings.telemetry)


def default_app() -> FastAPI:
    """For `uvicorn --factory kg.http:default_app`: the configured settings, in a service's process
    (large buffers kept off the heap, kg.core.heap)."""
    bound_heap()
    return create_app(load_settings(), own_process=True)


# -- request size -----------------------------------------------------------------------------
class BodyTooLarge(StarletteHTTPException):
    """Raised while a body streams in; an HTTPException so FastAPI's body reader passes it on."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, [_too_large(max_bytes)])  # type: ignore[arg-type]  # a list: the handler below reads it


def _too_large(max_bytes: int) -> dict[str, str]:
    return {"field": "body", "message": f"the request body exceeds {max_bytes} bytes ([http] max_body_bytes)"}


class BodyLimit(HttpMiddleware):
    """Refuses request bodies over `[http] max_body_bytes` with 413: by Content-Length before the
    route runs, and by counting when the body streams in without one."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._refuse(scope, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        watched = StatusWatch(send)
        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:
            if watched.answered:
                raise
            await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        detail = _too_large(self.max_bytes)
        response = error_response(413, "body_too_large", detail["message"], [detail])
        await response(scope, _no_body, send)


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def _unparsed_body(exc: StarletteHTTPException) -> str | None:
    """Why FastAPI could not read a JSON body (its 400 keeps the reason only as the cause), or None."""
    cause = exc.__cause__
    if exc.status_code != 400 or cause is None:
        return None
    if isinstance(cause, UnicodeDecodeError):
        return f"the body is not UTF-8: byte 0x{cause.object[cause.start]:02x} at byte {cause.start}"
    if isinstance(cause, RecursionError):
        return "the JSON is nested too deeply to be read"
    return f"the body cannot be read as JSON: {type(cause).__name__}"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        detail = validation_detail(errors)
        if any(e.get("type") == "json_invalid" for e in errors):
            return error_response(400, "malformed_json", detail[0]["message"], detail)
        summary = "; ".join(f"{d['field']}: {d['message']}" for d in detail[:5])
        return error_response(422, "invalid_request", summary, detail)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail: list[dict[str, Any]] = exc.detail if isinstance(exc.detail, list) else []
        unparsed = _unparsed_body(exc)
        if unparsed is not None:
            return error_response(400, "malformed_json", unparsed, [{"field": "body", "message": unparsed}])
        message = exc.detail if isinstance(exc.detail, str) else (detail[0]["message"] if detail else "error")
        code = {400: "bad_request", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 409: "conflict",
                413: "body_too_large", 422: "invalid_request", 501: "not_implemented"}.get(exc.status_code, "error")
        return error_response(exc.status_code, code, message, detail)

    @app.exception_handler(AccessDenied)
    async def denied(request: Request, exc: AccessDenied) -> JSONResponse:
        code = "unauthorized" if exc.status == 401 else "forbidden"
        client = request.client.host if request.client else "-"  # the key itself is never logged
        log.warning("%s %s %s from %s: %s", exc.status, request.method, request.url.path, client, exc.message)
        response = error_response(exc.status, code, exc.message, [{"field": "X-API-Key", "message": exc.message}]
                                  if exc.status == 401 else [{"field": "namespace", "message": exc.message}])
        if exc.status == 401:
            response.headers["WWW-Authenticate"] = "X-API-Key"
        return response

    @app.exception_handler(ValueError)
    async def refused(_: Request, exc: ValueError) -> JSONResponse:
        if isinstance(exc, FieldError):
            return error_response(422, "invalid_request", str(exc), [{"field": exc.field, "message": exc.message}])
        return error_response(422, "invalid_request", str(exc), [{"field": "body", "message": str(exc)}])

    @app.exception_handler(StoreError)
    @app.exception_handler(ServiceUnavailable)
    @app.exception_handler(SessionExpired)
    async def unavailable_response(_: Request, exc: Exception) -> JSONResponse:
        log.warning("database unavailable: %s", type(exc).__name__)
        response = error_response(503, "database_unavailable", "the database cannot be reached; retry later")
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
        return response

    @app.exception_handler(Neo4jError)
    async def database_error(request: Request, exc: Neo4jError) -> JSONResponse:
        if unavailable(exc):  # a database not online yet (Neo4j starting)
            return await unavailable_response(request, exc)
        log.error("database error %s", exc.code)
        return error_response(500, "database_error", f"the database refused the request ({exc.code})")
