"""The HTTP API against the real server: ingest with per-item results, reads, sessions and recall,
API keys and namespace scoping, and a real uvicorn on loopback. The bad-input corpus is in
test_http_input.py."""

from __future__ import annotations

import asyncio
import logging
from typing import AsyncIterator

import httpx
import pytest
import uvicorn

from kg import AsyncMemory
from kg.access import key_digest
from kg.http import create_app
from tests.http_client import api, msg, running, settings_with
from tests.ports import free_port

KEY_A, KEY_B, KEY_ALL = "key-a-5f1c0e", "key-b-93ad71", "key-all-27bb04"
T0 = "2025-05-01T12:00:00Z"


async def test_health_and_openapi(api: httpx.AsyncClient) -> None:
    assert (await api.get("/health")).json() == {"status": "ok", "database": "up", "version": "1"}
    schema = (await api.get("/openapi.json")).json()
    paths = schema["paths"]
    for path in ("/v1/namespaces/{namespace}/messages", "/v1/namespaces/{namespace}/search",
                 "/v1/namespaces/{namespace}/facts", "/v1/namespaces/{namespace}/rules"):
        assert path in paths
    assert schema["components"]["securitySchemes"]["APIKeyHeader"]["name"] == "X-API-Key"
    item = schema["components"]["schemas"]["MessageIn"]
    assert set(item["required"]) == {"role", "text", "ts"}


async def test_ingest_reports_each_item_and_stores_the_valid_ones(api: httpx.AsyncClient, namespace: str) -> None:
    body = {"messages": [
        msg("We picked TimescaleDB for analytics.", 0, session_id="s1"),
        msg("bad role", 1, role="robot", session_id="s1"),
        msg("bad time", 2, ts="2025-13-45T99:00:00Z", session_id="s1"),
        msg("Lisbon is lovely in May.", 3, session_id="s1"),
        "not an object",
        msg("extra field", 4, session_id="s1", mood="happy"),
        msg("   ", 5, session_id="s1"),
    ]}
    r = await api.post(f"/v1/namespaces/{namespace}/messages", json=body)
    assert r.status_code == 207, r.text
    out = r.json()
    assert (out["accepted"], out["rejected"], out["written"]) == (2, 5, 2)
    errors = {i["index"]: i["errors"] for i in out["items"] if i["status"] == "rejected"}
    assert errors[1][0]["field"] == "messages[1].role" and "'user'" in errors[1][0]["message"]
    assert errors[2][0]["field"] == "messages[2].ts"
    assert errors[4] == [{"field": "messages[4]", "message": "must be a JSON object"}]
    assert errors[5][0]["field"] == "messages[5].mood" and "not permitted" in errors[5][0]["message"]
    assert errors[6][0]["field"] == "messages[6].text" and "blank" in errors[6][0]["message"]

    again = await api.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [body["messages"][0]]})
    assert again.status_code == 200 and again.json()["existing"] == 1  # idempotent

    session = (await api.get(f"/v1/namespaces/{namespace}/sessions/s1")).json()
    assert [t["text"] for t in session["turns"]] == ["We picked TimescaleDB for analytics.", "Lisbon is lovely in May."]
    hits = (await api.get(f"/v1/namespaces/{namespace}/search", params={"q": "which database?", "k": 1})).json()
    assert hits[0]["turn"]["text"].startswith("We picked TimescaleDB")
    assert hits[0]["recipe"] == "hierarchical"  # no strategy: the configured default
    hits = (await api.get(f"/v1/namespaces/{namespace}/search",
                          params={"q": "Lisbon", "strategy": "fulltext"})).json()
    assert [h["recipe"] for h in hits] == ["bm25"]  # the old name of the bm25 recipe


async def test_session_ingest_and_facts_over_http(api: httpx.AsyncClient, namespace: str) -> None:
    r = await api.post(f"/v1/namespaces/{namespace}/sessions",
                       json={"session_id": "retro", "turns": [msg("I moved to Lisbon", 0), msg("Nice!", 1)]})
    assert r.status_code == 200 and r.json()["written"] == 2
    sessions = (await api.get(f"/v1/namespaces/{namespace}/sessions")).json()
    assert [s["id"] for s in sessions] == ["retro"]
    base = f"/v1/namespaces/{namespace}/facts"
    for city, since in (("Porto", "2020-01-01T00:00:00Z"), ("Lisbon", "2024-06-01T00:00:00Z")):
        r = await api.post(base, json={"subject": "user", "predicate": "lives_in", "object": city,
                                       "valid_from": since})
        assert r.status_code == 200, r.text
    past = (await api.get(base, params={"subject": "user", "as_of": "2021-01-01T00:00:00Z"})).json()
    assert [f["object_value"] for f in past] == ["Porto"]
    history = (await api.get(f"{base}/history", params={"subject": "user"})).json()
    assert {f["object_value"] for f in history} == {"Porto", "Lisbon"}
    rules = (await api.get(f"/v1/namespaces/{namespace}/rules")).json()
    assert rules["namespace"] == namespace and rules["prompt"] == ""
    r = await api.post(f"/v1/namespaces/{namespace}/corrections",
                       json={"session_id": "retro", "rule_text": "Use metric units.", "correction_type": "style"})
    assert r.status_code == 200 and r.json()["decision"] == "added"
    confirmed = await api.post(f"/v1/namespaces/{namespace}/corrections/{r.json()['correction_id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["status"] == "rule"
    rules = (await api.get(f"/v1/namespaces/{namespace}/rules")).json()
    assert [c["rule_text"] for c in rules["rules"]] == ["Use metric units."] and "metric" in rules["prompt"]
    missing = await api.post(f"/v1/namespaces/{namespace}/corrections/nope/confirm")
    assert missing.status_code == 404 and missing.json()["detail"][0]["field"] == "correction_id"


async def test_jobs_are_scoped_to_their_namespace(api: httpx.AsyncClient, namespace: str,
                                                  memory: AsyncMemory) -> None:
    r = await api.post(f"/v1/namespaces/{namespace}/jobs", json={"kind": "maintain_corrections", "target": namespace})
    assert r.status_code == 200, r.text
    job = r.json()
    assert job["status"] == "queued" and job["namespace"] == namespace
    assert (await api.get(f"/v1/namespaces/{namespace}/jobs/{job['id']}")).json()["id"] == job["id"]
    assert [j["id"] for j in (await api.get(f"/v1/namespaces/{namespace}/jobs")).json()] == [job["id"]]
    r = await api.get(f"/v1/namespaces/{namespace}-other/jobs/{job['id']}")
    assert r.status_code == 404 and r.json()["detail"][0]["field"] == "job_id"


# -- sessions, summaries and recall -----------------------------------------------------------
async def test_session_search_recall_and_summaries(api: httpx.AsyncClient, namespace: str) -> None:
    base = f"/v1/namespaces/{namespace}"
    db = [msg("We compared PostgreSQL and TimescaleDB for the analytics database.", 0),
          msg("TimescaleDB hypertables make the time-series queries fast.", 1),
          msg("So the database for analytics is TimescaleDB.", 2)]
    trip = [msg("I am planning a trip to Lisbon in May.", 30), msg("Which beaches near Lisbon are good?", 31),
            msg("Cascais has a lovely beach and the train from Lisbon is quick.", 32)]
    for sid, turns in (("db", db), ("trip", trip)):
        r = await api.post(f"{base}/sessions", json={"session_id": sid, "turns": turns})
        assert r.status_code == 200, r.text

    hits = (await api.get(f"{base}/search/sessions", params={"q": "beaches near Lisbon", "k": 2})).json()
    assert hits[0]["session"]["id"] == "trip" and hits[0]["turns"], hits
    assert {"session", "summary", "score", "turns"} <= set(hits[0])
    hits = (await api.get(f"{base}/search/sessions", params={"q": "time-series database"})).json()
    assert hits[0]["session"]["id"] == "db"

    for strategy in ("flat", "bm25", "hybrid", "hierarchical"):
        r = await api.get(f"{base}/search", params={"q": "Cascais beach", "k": 3, "strategy": strategy})
        assert r.status_code == 200, r.text
        assert r.json() and all(h["recipe"] == strategy and h["turn"]["namespace"] == namespace for h in r.json())
        assert "Cascais" in r.json()[0]["turn"]["text"], (strategy, r.json())

    r = await api.post(f"{base}/facts", json={"subject": "user", "predicate": "prefers_database",
                                              "object": "TimescaleDB", "valid_from": T0})
    assert r.status_code == 200, r.text
    hits = (await api.get(f"{base}/recall", params={"q": "which database does the user prefer?", "k": 10})).json()
    facts = [h for h in hits if h["kind"] == "fact"]
    assert facts and facts[0]["fact"]["object_value"] == "TimescaleDB", hits
    assert all({"kind", "id", "text", "score", "similarity", "graph", "confidence"} <= set(h) for h in hits)
    before = (await api.get(f"{base}/recall", params={"q": "which database does the user prefer?",
                                                      "as_of": "2025-04-01T00:00:00Z"})).json()
    assert not [h for h in before if h["kind"] == "fact"]  # not yet true then
    memories = (await api.get(f"{base}/search/memories", params={"q": "analytics database", "k": 5})).json()
    assert memories and {h["kind"] for h in memories} <= {"turn", "fact"}

    first = await api.post(f"{base}/sessions/trip/close")
    assert first.status_code == 200, first.text
    assert first.json()["version"] == 1 and first.json()["session_id"] == "trip" and first.json()["text"]
    r = await api.post(f"{base}/sessions", json={"session_id": "trip", "turns": [msg("And Sintra for a day.", 40)]})
    assert r.status_code == 200
    second = (await api.post(f"{base}/sessions/trip/close")).json()
    assert second["version"] == 2 and second["slot"] == first.json()["slot"]
    current = (await api.get(f"{base}/sessions/trip/summaries")).json()
    assert [s["version"] for s in current if s["kind"] == "session"] == [2]
    every = (await api.get(f"{base}/sessions/trip/summaries", params={"include_expired": True})).json()
    assert sorted(s["version"] for s in every if s["kind"] == "session") == [1, 2]


# -- keys and namespace scoping ---------------------------------------------------------------
@pytest.fixture
async def keyed(memory: AsyncMemory, namespace: str) -> AsyncIterator[tuple[httpx.AsyncClient, str, str]]:
    """Key A (configured as its hash) may use `namespace`; key B only `<namespace>-b`; KEY_ALL both."""
    other = namespace + "-b"
    keys = {key_digest(KEY_A): [namespace], KEY_B: [other], key_digest(KEY_ALL): ["*"]}
    app = create_app(settings_with(keys=keys), memory=memory)
    try:
        async with running(app) as client:
            yield client, namespace, other
    finally:
        await memory.delete_namespace(other)


async def test_a_key_for_namespace_a_can_never_read_b(keyed: tuple[httpx.AsyncClient, str, str]) -> None:
    client, a, b = keyed
    for key, ns in ((KEY_A, a), (KEY_B, b)):
        r = await client.post(f"/v1/namespaces/{ns}/messages", headers={"X-API-Key": key},
                              json={"messages": [msg(f"secret of {ns}", session_id="s1")]})
        assert r.status_code == 200, r.text
        await client.post(f"/v1/namespaces/{ns}/facts", headers={"X-API-Key": key},
                          json={"subject": "user", "predicate": "secret", "object": ns})
    scoped = [(method.upper(), path) for path, operations in create_app(settings_with(keys={})).openapi()["paths"].items()
              if path.startswith("/v1/namespaces/{namespace}") for method in operations]
    assert len(scoped) >= 8
    paths = {path.removeprefix("/v1/namespaces/{namespace}") for _, path in scoped}
    assert {"/sessions/{session_id}/close", "/sessions/{session_id}/summaries", "/search/sessions",
            "/search/memories", "/recall"} <= paths  # the new retrieval routes are checked below too
    for method, template in scoped:
        path = template.format(namespace=b, session_id="s1", correction_id="c1", job_id="j1", subject="user",
                               format="chatgpt", turn_id="t1", fact_id="f1", edge_id="e1", id="x")
        r = await client.request(method, path, headers={"X-API-Key": KEY_A},
                                 params={"q": "secret", "subject": "user"},
                                 json={"messages": [msg("x")], "subject": "s", "predicate": "p", "object": "o"})
        assert r.status_code == 403 and r.json()["error"] == "forbidden", (method, path, r.text)
    hits = (await client.get(f"/v1/namespaces/{a}/search", headers={"X-API-Key": KEY_A},
                             params={"q": "secret", "k": 50})).json()
    assert hits and all(h["turn"]["namespace"] == a for h in hits)
    for ns in (a, b):
        r = await client.get(f"/v1/namespaces/{ns}/sessions/s1", headers={"X-API-Key": KEY_ALL})
        assert r.status_code == 200


async def test_missing_or_unknown_keys_get_401_and_are_never_logged(
        keyed: tuple[httpx.AsyncClient, str, str], caplog: pytest.LogCaptureFixture) -> None:
    client, a, _ = keyed
    caplog.set_level(logging.DEBUG)
    r = await client.get(f"/v1/namespaces/{a}/sessions")
    assert r.status_code == 401 and r.json()["detail"][0]["field"] == "X-API-Key"
    assert r.headers["WWW-Authenticate"] == "X-API-Key"
    r = await client.get(f"/v1/namespaces/{a}/sessions", headers={"X-API-Key": "guess-" + KEY_A})
    assert r.status_code == 401 and r.json()["message"] == "unknown API key"
    r = await client.get("/health")
    assert r.status_code == 200  # health needs no key
    settings = settings_with(keys={KEY_B: ["x"]})
    assert KEY_B not in repr(settings) and KEY_B not in str(settings.http)
    for secret in (KEY_A, KEY_B, KEY_ALL, "guess-" + KEY_A):
        assert secret not in caplog.text


async def test_real_uvicorn_on_loopback(memory: AsyncMemory, namespace: str) -> None:
    port = free_port()
    app = create_app(settings_with(keys={}, max_body_bytes=4096), memory=memory)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            assert (await c.get("/health")).status_code == 200
            r = await c.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [msg("z" * 5000)]})
            assert r.status_code == 413
            r = await c.post(f"/v1/namespaces/{namespace}/messages", content=b"{oops",
                             headers={"content-type": "application/json"})
            assert r.status_code == 400 and r.json()["error"] == "malformed_json"
            r = await c.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [msg("hello", 1)]})
            assert r.status_code == 200 and r.json()["written"] == 1
            assert (await c.get("/health")).status_code == 200
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)


def test_the_app_includes_every_route_modules_router_once() -> None:
    """Routes register through routers that `create_app` includes, not on shared ones as a side effect
    of importing a module: every module's router is in the app, and a second app does not add up."""
    import importlib
    import pkgutil

    from fastapi import APIRouter
    from fastapi.routing import APIRoute

    import kg.http

    routers = [r for info in pkgutil.iter_modules(kg.http.__path__)
               for r in vars(importlib.import_module(f"kg.http.{info.name}")).values() if isinstance(r, APIRouter)]
    declared = sorted((m.lower(), route.path) for r in routers for route in r.routes
                      if isinstance(route, APIRoute) for m in route.methods)
    assert len(declared) > 25
    for _ in range(2):
        paths = create_app(settings_with(keys={})).openapi()["paths"]
        assert sorted((m, p) for p, operations in paths.items() for m in operations) == declared
