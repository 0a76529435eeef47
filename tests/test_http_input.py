"""The HTTP API's bad-input corpus against the real server: a 4xx naming the field, nothing else
lost, the server stays up; unknown namespaces; injection-looking text stored verbatim."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import httpx
import pytest

from kg import AsyncMemory
from tests.http_client import api, msg


# -- the bad-input corpus ---------------------------------------------------------------------
def escaped(body: Any) -> dict[str, Any]:
    """A JSON body as `\\uXXXX` escapes (httpx's `json=` writes UTF-8, which a lone surrogate has none of)."""
    return {"content": json.dumps(body), "headers": {"content-type": "application/json"}}


BAD_INPUTS: list[tuple[str, str, str, dict[str, Any], int, str]] = [
    # (case, method, path under the namespace, request kwargs, status, field named)
    ("malformed JSON", "POST", "/messages", {"content": b'{"messages": [{"role": "user",',
                                            "headers": {"content-type": "application/json"}}, 400, "body"),
    ("JSON of the wrong shape", "POST", "/messages", {"json": [1, 2, 3]}, 422, "body"),
    ("empty batch", "POST", "/messages", {"json": {"messages": []}}, 422, "messages"),
    ("missing batch", "POST", "/messages", {"json": {}}, 422, "messages"),
    ("batch over max_batch", "POST", "/messages", {"json": {"messages": [msg("x")] * 51}}, 422, "messages"),
    ("invalid timestamp", "POST", "/messages", {"json": {"messages": [msg("x", ts="yesterday")]}}, 422,
     "messages[0].ts"),
    ("impossible date", "POST", "/messages", {"json": {"messages": [msg("x", ts="2025-02-30T10:00:00Z")]}}, 422,
     "messages[0].ts"),
    ("unknown role", "POST", "/messages", {"json": {"messages": [msg("x", role="wizard")]}}, 422,
     "messages[0].role"),
    ("namespace inside an item", "POST", "/messages", {"json": {"messages": [msg("x", namespace="other")]}}, 422,
     "messages[0].namespace"),
    ("turn of another session", "POST", "/sessions",
     {"json": {"session_id": "a", "turns": [msg("x", session_id="b")]}}, 422, "turns[0].session_id"),
    ("text over max_text_chars", "POST", "/messages", {"json": {"messages": [msg("x" * 1001)]}}, 422,
     "messages[0].text"),
    ("fact without subject", "POST", "/facts", {"json": {"predicate": "p", "object": "o"}}, 422, "subject"),
    ("fact with bad op", "POST", "/facts", {"json": {"subject": "s", "predicate": "p", "object": "o",
                                                     "op": "delete"}}, 422, "op"),
    ("fact with bad valid_from", "POST", "/facts", {"json": {"subject": "s", "predicate": "p", "object": "o",
                                                             "valid_from": "soon"}}, 422, "valid_from"),
    ("search without query", "GET", "/search", {}, 422, "q"),
    ("search with k=0", "GET", "/search", {"params": {"q": "x", "k": 0}}, 422, "k"),
    ("search with a query over 2000 characters", "GET", "/search", {"params": {"q": "x" * 2001}}, 422, "q"),
    ("unknown strategy", "GET", "/search", {"params": {"q": "x", "strategy": "telepathy"}}, 422, "strategy"),
    ("as_of not a time", "GET", "/facts", {"params": {"subject": "s", "as_of": "last tuesday"}}, 422, "as_of"),
    ("job of unknown kind", "POST", "/jobs", {"json": {"kind": "mine_bitcoin", "target": "x"}}, 422, "kind"),
    ("job list with bad status", "GET", "/jobs", {"params": {"status": "sleeping"}}, 422, "status"),
    ("correction of unknown type", "POST", "/corrections",
     {"json": {"session_id": "s", "rule_text": "r", "correction_type": "vibes"}}, 422, "correction_type"),
    ("search with unknown recipe", "GET", "/search", {"params": {"q": "x", "strategy": "magic"}}, 422, "strategy"),
    ("session search with k 0", "GET", "/search/sessions", {"params": {"q": "x", "k": 0}}, 422, "k"),
    ("session search without q", "GET", "/search/sessions", {}, 422, "q"),
    ("memory search with k 101", "GET", "/search/memories", {"params": {"q": "x", "k": 101}}, 422, "k"),
    ("recall with k not a number", "GET", "/recall", {"params": {"q": "x", "k": "many"}}, 422, "k"),
    ("recall with bad as_of", "GET", "/recall", {"params": {"q": "x", "as_of": "last tuesday"}}, 422, "as_of"),
    ("body not UTF-8", "POST", "/messages", {"content": b'{"messages": ["\xff\xfe"]}',
                                            "headers": {"content-type": "application/json"}}, 400, "body"),
    ("JSON nested too deeply", "POST", "/messages", {"content": '{"messages": ' + "[" * 5000 + "]" * 5000 + "}",
                                                     "headers": {"content-type": "application/json"}}, 400, "body"),
    ("session_id beside messages", "POST", "/messages", {"json": {"session_id": "s", "messages": [msg("x")]}},
     422, "session_id"),
    ("unknown field beside turns", "POST", "/sessions", {"json": {"session_id": "s", "turns": [msg("x")],
                                                                  "mesages": []}}, 422, "mesages"),
    ("lone surrogate in a text", "POST", "/messages", escaped({"messages": [msg("broken \ud800")]}), 422,
     "messages[0].text"),
    ("lone surrogate in a fact's subject", "POST", "/facts", escaped({"subject": "\udc00", "predicate": "p",
                                                                       "object": "o"}), 422, "subject"),
    ("lone surrogate in a relationship's subject_type", "POST", "/relationships",
     escaped({"subject": "x", "type": "works_for", "object": "Acme", "subject_type": "\ud800"}), 422,
     "subject_type"),
    ("close of unknown session", "POST", "/sessions/nope/close", {}, 404, "session_id"),
    ("summaries of unknown session", "GET", "/sessions/nope/summaries", {}, 404, "session_id"),
]


@pytest.mark.parametrize("case,method,path,kwargs,status,field", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
async def test_bad_input_gets_a_4xx_naming_the_field(api: httpx.AsyncClient, namespace: str, case: str,
                                                     method: str, path: str, kwargs: dict[str, Any],
                                                     status: int, field: str) -> None:
    await api.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [msg("seed")]})
    r = await api.request(method, f"/v1/namespaces/{namespace}{path}", **kwargs)
    assert r.status_code == status, r.text
    body = r.json()
    assert body["message"] and body["error"]
    assert field in [d["field"] for d in body["detail"]], body
    assert all(d["message"] for d in body["detail"]), body  # each says why
    assert (await api.get("/health")).status_code == 200


async def test_a_lone_surrogate_in_one_items_session_id_refuses_that_item_alone(api: httpx.AsyncClient,
                                                                               namespace: str) -> None:
    """`[good, bad]`: 207, the good item stored, the bad one's error naming its field (it refused the
    whole batch with a 422 naming `body`: the turn id's hash could not encode it)."""
    r = await api.post(f"/v1/namespaces/{namespace}/messages",
                       **escaped({"messages": [msg("good", 0, session_id="s1"), msg("bad", 1, session_id="\ud800")]}))
    assert r.status_code == 207, r.text
    body = r.json()
    assert (body["accepted"], body["rejected"], body["written"]) == (1, 1, 1)
    assert [(e["field"], "surrogate" in e["message"]) for e in body["items"][1]["errors"]] == [
        ("messages[1].session_id", True)]
    turns = (await api.get(f"/v1/namespaces/{namespace}/sessions/s1")).json()["turns"]
    assert [t["text"] for t in turns] == ["good"]


async def test_huge_bodies_get_413_and_the_server_stays_up(api: httpx.AsyncClient, namespace: str) -> None:
    big = json.dumps({"messages": [msg("y" * 70_000)]}).encode()
    r = await api.post(f"/v1/namespaces/{namespace}/messages", content=big,
                       headers={"content-type": "application/json"})
    assert r.status_code == 413 and "65536 bytes" in r.json()["message"]

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it streams
        for _ in range(20):
            yield b" " * 8192

    r = await api.post(f"/v1/namespaces/{namespace}/messages", content=chunks(),
                       headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert (await api.get("/health")).status_code == 200


async def test_unknown_and_invalid_namespaces(api: httpx.AsyncClient, namespace: str) -> None:
    r = await api.get(f"/v1/namespaces/{namespace}/search", params={"q": "anything"})
    assert r.status_code == 404 and r.json()["detail"][0]["field"] == "namespace"
    assert "holds no data" in r.json()["message"]
    r = await api.get("/v1/namespaces/a' OR 1=1 --/sessions")
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "namespace"


INJECTIONS = [
    "'); MATCH (n) DETACH DELETE n; //",
    "\" OR 1=1 --",
    "}) RETURN n UNION MATCH (m) RETURN m //",
    "<script>alert(1)</script>",
    "$namespace {namespace: 'other'}",
    "text:* OR namespace:* AND \\",
    "\u0000 nul and \u202e right-to-left",
]


async def test_injection_looking_text_is_stored_verbatim(api: httpx.AsyncClient, namespace: str,
                                                         memory: AsyncMemory) -> None:
    messages = [msg(t, i, session_id="inj") for i, t in enumerate(INJECTIONS)]
    r = await api.post(f"/v1/namespaces/{namespace}/messages", json={"messages": messages})
    assert r.status_code == 200, r.text
    turns = (await api.get(f"/v1/namespaces/{namespace}/sessions/inj")).json()["turns"]
    assert [t["text"] for t in turns] == INJECTIONS
    for strategy in (None, "flat", "bm25"):
        r = await api.get(f"/v1/namespaces/{namespace}/search",
                          params={"q": INJECTIONS[5]} | ({"strategy": strategy} if strategy else {}))
        assert r.status_code == 200
        assert all(h["turn"]["namespace"] == namespace for h in r.json())
    r = await api.post(f"/v1/namespaces/{namespace}/facts",
                       json={"subject": INJECTIONS[0], "predicate": "said", "object": INJECTIONS[2]})
    assert r.status_code == 200
    facts = (await api.get(f"/v1/namespaces/{namespace}/facts", params={"subject": INJECTIONS[0]})).json()
    assert [f["object_value"] for f in facts] == [INJECTIONS[2]]
    assert await memory.session(namespace, "inj") is not None  # and the graph is still there


async def test_a_long_query_is_answered_not_refused_by_lucene(api: httpx.AsyncClient, namespace: str) -> None:
    """1,600 characters of distinct words overflowed Lucene's clause limit on the default recipe (a 500)."""
    r = await api.post(f"/v1/namespaces/{namespace}/sessions", json={"session_id": "s", "turns": [
        msg("Lisbon weather is lovely in May.", 0), msg("We picked TimescaleDB.", 1)]})
    assert r.status_code == 200
    query = " ".join(f"term{i}" for i in range(300))[:1600]
    for strategy in (None, "bm25", "hybrid"):
        r = await api.get(f"/v1/namespaces/{namespace}/search",
                          params={"q": query} | ({"strategy": strategy} if strategy else {}))
        assert r.status_code == 200, r.text
    r = await api.get(f"/v1/namespaces/{namespace}/search", params={"q": query + " " + "y" * 500})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "q"
