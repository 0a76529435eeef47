"""What an operator's tooling calls: the liveness `/health`, the readiness `/ready` and `/metrics`
(`kg.http.metrics`, when `[http] metrics = true`)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response, Security
from pydantic import BaseModel

import kg.cypher as cypher
from kg.core.embedders.fallback import Embedded, FallbackChain
from kg.core.local_neo4j.server import LocalNeo4j
from kg.http.common import API_VERSION, api_key, error_response, memory_of
from kg.http.metrics import CONTENT_TYPE, Metrics

PROBE_TEXT = "ready"
router = APIRouter(tags=["service"])


class Health(BaseModel):
    status: Literal["ok"]
    database: Literal["up"]
    version: str


@router.get("/health", response_model=Health)
async def health(request: Request) -> Health:
    """Liveness: the app is up and the database answers."""
    await memory_of(request).store.ping(timeout_s=0.8)  # answers 503 within a second when it is down
    return Health(status="ok", database="up", version=API_VERSION)


@router.get("/ready", responses={503: {"description": "not ready: the failing checks, with Retry-After"}})
async def ready(request: Request) -> Any:
    """Readiness: the database answers, every migration is applied and the embedder is loaded.
    503 with the failing checks otherwise, so a load balancer sends no traffic before then."""
    memory = memory_of(request)
    checks: dict[str, str] = {}
    try:
        await memory.store.ping(timeout_s=0.8)
        checks["database"] = "up"
        applied = {r["id"] for r in await memory.store.read("database/migration_applied")}
        pending = [m for m in cypher.migrations() if m not in applied]
        checks["migrations"] = "applied" if not pending else f"{len(pending)} pending"
    except Exception as exc:  # noqa: BLE001 - any failure to answer is "not ready", named below
        checks["database"] = f"down ({type(exc).__name__})"
    checks["embedder"] = _embedder_state(request)
    if checks["database"] == "up" and checks.get("migrations") == "applied" and (
            checks["embedder"] == "loaded" or checks["embedder"].startswith("degraded")):
        return {"status": "ready", "checks": checks, "server": _server(request)}
    failing = [{"field": k, "message": v} for k, v in checks.items()
               if v not in ("up", "applied", "loaded") and not v.startswith("degraded")]
    response = error_response(503, "not_ready", "; ".join(f"{d['field']}: {d['message']}" for d in failing), failing)
    response.headers["Retry-After"] = str(request.app.state.settings.http.retry_after_s)
    return response


def _server(request: Request) -> dict[str, Any]:
    """The database as the store found it on connecting (version, edition, Cypher versions, the
    statements it runs: kg.core.store.capabilities) and, for the managed local server, the Java it runs on,
    where that Java came from and why."""
    settings = request.app.state.settings
    server: dict[str, Any] = memory_of(request).store.capabilities.as_dict()
    if settings.neo4j.uri:
        server["java"] = None  # a server this process does not manage
    else:
        server["java"] = LocalNeo4j(settings.neo4j.local).running_java()
    return server


def _embedder_state(request: Request) -> str:
    """The embedder is loaded once it has embedded a probe; the first probe starts the load in the
    background (a local model takes seconds) instead of holding the request; a failed probe is
    tried again by the next call. The probe goes through the fallback chain as writes do: with the
    primary down and the fallback answering, the service is ready, "degraded" (the next call
    probes again, so a recovered primary shows)."""
    state = request.app.state
    probe: asyncio.Task[Embedded] | None = getattr(state, "embedder_probe", None)
    last: str = getattr(state, "embedder_state", "loading")
    if probe is not None and probe.done():
        if probe.cancelled() or probe.exception() is not None:
            last, probe = "failed; loading again", None
        else:
            degraded = probe.result().degraded
            last = f"degraded: {degraded}" if degraded else "loaded"
            probe = None if degraded else probe
        state.embedder_state = last
    if probe is None:
        memory = memory_of(request)
        state.embedder_probe = asyncio.ensure_future(
            FallbackChain(memory.embedder, memory.fallback_embedder).embed([PROBE_TEXT]))
    return last


@router.get("/metrics", response_class=Response, responses={404: {"description": "[http] metrics is off"}})
async def metrics(request: Request, key: str | None = Security(api_key)) -> Response:
    """Prometheus text format. Off unless `[http] metrics = true`; with `[http] keys` configured,
    only a key granted every namespace ("*") may read it."""
    found: Metrics | None = getattr(request.app.state, "metrics", None)
    if found is None:
        raise HTTPException(404, [{"field": "path", "message": "metrics are off ([http] metrics = false)"}])
    grant = request.app.state.keyring.grant(key)
    if grant.namespaces is not None:
        raise HTTPException(403, [{"field": "X-API-Key", "message": "/metrics needs a key granted \"*\""}])
    return Response(await found.scrape(memory_of(request).store), media_type=CONTENT_TYPE)


def register(app: FastAPI) -> None:
    app.include_router(router)
