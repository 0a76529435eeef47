"""The span of every HTTP request (`[telemetry] tracing`): a server span named by the method and the
route template (`GET /v1/namespaces/{namespace}/search`), never by the path, which holds the
namespace; it continues the caller's trace when the request carries a W3C `traceparent`. Its
attributes are the method, the route template and the status; no path, query or header value.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from kg.core.telemetry import hooks as telemetry
from kg.http.asgi import HttpMiddleware, StatusWatch

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
PROPAGATED = (b"traceparent", b"tracestate")


class RequestSpans(HttpMiddleware):
    """Outermost middleware: the request's span is current while the app (refusals included) runs.
    `routes` (the app's) name the requests FastAPI's router leaves without a route in the scope:
    those of plain Starlette routes such as `/mcp`."""

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute] = ()) -> None:
        super().__init__(app)
        self.routes = routes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"] if scope["method"] in METHODS else "_OTHER"
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"] if k in PROPAGATED}
        attributes = (("http.request.method", method), ("url.scheme", scope.get("scheme", "http")))
        watched = StatusWatch(send)
        with telemetry.server_span("HTTP" if method == "_OTHER" else method, headers, attributes) as span:
            try:
                await self.app(scope, receive, watched)
            finally:
                template = self._template(scope)
                if template is not None:
                    span.rename(f"{method} {template}")
                    span.set("http.route", template)
                span.set("http.response.status_code", int(watched.status))
                if watched.status >= 500:
                    span.fail(str(int(watched.status)))

    def _template(self, scope: Scope) -> str | None:
        """The route template: never the path, which holds a namespace or whatever a client sent."""
        found = getattr(scope.get("route"), "path", None)
        if found is not None:
            return found
        for route in self.routes:
            if route.matches(scope)[0] is Match.FULL:
                return getattr(route, "path", None)
        return None
