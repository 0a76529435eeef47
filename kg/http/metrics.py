"""The Prometheus metrics of one API process (`[http] metrics = true`, `GET /metrics`).

Families: requests by route template and status, the event loop's lag, job queue depth by kind
and status (read from the database at each scrape), job runs by kind and outcome, LLM calls and
tokens by purpose, embedder latency by kind (query, batch), and Neo4j latency by the statement's
`cypher/` file name. The foundation reports the last four through `kg.core.telemetry.hooks`. No label ever holds a namespace
or user text: a route is its template (`/v1/namespaces/{namespace}/search`), not its path.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Receive, Scope, Send

from kg.core.telemetry import hooks as telemetry
from kg.http.asgi import HttpMiddleware, StatusWatch

if TYPE_CHECKING:
    from kg.core.store.store import Store

FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
SLOW = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0)
LAG_EVERY_S = 0.1
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """One registry per app, fed by its requests and, while the app runs, by the foundation."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.requests = Histogram("kg_http_request_seconds", "HTTP requests by route template, method and status",
                                  ["route", "method", "status"], buckets=SLOW, registry=r)
        self.statements = Histogram("kg_neo4j_statement_seconds", "Neo4j statements by cypher/ file name",
                                    ["statement"], buckets=FAST, registry=r)
        self.embeds = Histogram("kg_embed_seconds", "Embedder calls: query (a few texts) or batch",
                                ["kind"], buckets=FAST, registry=r)
        self.llm_calls = Histogram("kg_llm_call_seconds", "LLM calls by purpose", ["purpose"], buckets=SLOW,
                                   registry=r)
        self.llm_tokens = Counter("kg_llm_tokens", "LLM tokens by purpose and direction", ["purpose", "direction"],
                                  registry=r)
        self.jobs = Histogram("kg_job_run_seconds", "Job runs in this process by kind and outcome "
                              "(done, retrying, dead, lost)", ["kind", "outcome"], buckets=SLOW, registry=r)
        self.loop_lag = Histogram("kg_event_loop_lag_seconds", "How late a timer on the API's event loop fires "
                                  f"(one every {LAG_EVERY_S:g} s): what a request waits for its first step",
                                  buckets=FAST, registry=r)
        self._watch: asyncio.Task[None] | None = None
        self.depth = Gauge("kg_job_queue_depth", "Jobs in the queue by kind and status", ["kind", "status"],
                           registry=r)

    # -- kg.core.telemetry.hooks.Observer ---------------------------------------------------------
    def statement(self, name: str, seconds: float) -> None:
        self.statements.labels(name).observe(seconds)

    def embed(self, kind: str, seconds: float) -> None:
        self.embeds.labels(kind).observe(seconds)

    def llm(self, purpose: str, seconds: float, input_tokens: int, output_tokens: int) -> None:
        self.llm_calls.labels(purpose).observe(seconds)
        self.llm_tokens.labels(purpose, "input").inc(input_tokens)
        self.llm_tokens.labels(purpose, "output").inc(output_tokens)

    def job(self, kind: str, outcome: str, seconds: float) -> None:
        self.jobs.labels(kind, outcome).observe(seconds)

    def start(self) -> None:
        """From the app's lifespan, on its event loop."""
        telemetry.add_observer(self)
        self._watch = asyncio.get_running_loop().create_task(self._watch_loop(), name="event loop lag")

    def stop(self) -> None:
        telemetry.remove_observer(self)
        if self._watch is not None:
            self._watch.cancel()

    async def _watch_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            at = loop.time()
            await asyncio.sleep(LAG_EVERY_S)
            self.loop_lag.observe(max(0.0, loop.time() - at - LAG_EVERY_S))

    async def scrape(self, store: "Store") -> bytes:
        rows = await store.read("jobs/depth")
        self.depth.clear()
        for row in rows:
            self.depth.labels(row["kind"], row["status"]).set(row["jobs"])
        return generate_latest(self.registry)


class RequestMetrics(HttpMiddleware):
    """Times every HTTP request, refused ones included (it sits outside the backpressure)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        super().__init__(app)
        self.metrics = metrics

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        watched = StatusWatch(send)
        try:
            await self.app(scope, receive, watched)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(template, scope["method"], str(watched.status)).observe(
                time.perf_counter() - started)
