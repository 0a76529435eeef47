"""Bad input never succeeds silently: the server's clock decides transaction time, variant spellings
of a value are one value, every string field has a limit, timestamps are ISO 8601 only, and a
database that is down answers 503 fast. Through HTTP (and MCP where the tool exists) on the real
database."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from mcp import Client

from kg import AsyncMemory, load_settings
from kg.core.models.limits import FieldError
from kg.mcp.server import LocalScope, build_server
from tests.http_client import api, msg


def fields(response: httpx.Response) -> list[str]:
    return [d["field"] for d in response.json()["detail"]]


async def remember(api: httpx.AsyncClient, namespace: str, **body: Any) -> httpx.Response:
    return await api.post(f"/v1/namespaces/{namespace}/facts", json=body)


async def current(api: httpx.AsyncClient, namespace: str, subject: str = "user",
                  predicate: str | None = None) -> list[dict[str, Any]]:
    params = {"subject": subject, **({"predicate": predicate} if predicate else {})}
    response = await api.get(f"/v1/namespaces/{namespace}/facts", params=params)
    assert response.status_code == 200, response.text
    return response.json()


# -- 1. transaction time is the server's ------------------------------------------------------
async def test_future_recorded_at_is_refused_and_later_writes_still_land(api: httpx.AsyncClient,
                                                                         namespace: str) -> None:
    fact = {"subject": "user", "predicate": "lives_in"}
    future = await remember(api, namespace, **fact, object="Oslo", recorded_at="9999-12-31T00:00:00Z")
    assert future.status_code == 422 and fields(future) == ["recorded_at"]
    ten_min = (datetime.now(timezone.utc) + timedelta(minutes=10)).isoformat()
    fast_clock = await remember(api, namespace, **fact, object="Oslo", recorded_at=ten_min)
    assert fast_clock.status_code == 422 and fields(fast_clock) == ["recorded_at"]
    within_skew = (datetime.now(timezone.utc) + timedelta(seconds=20)).isoformat()
    assert (await remember(api, namespace, **fact, object="Porto", recorded_at=within_skew)).status_code == 200
    before = datetime.now(timezone.utc)
    later = await remember(api, namespace, **fact, object="Lisbon")
    assert later.status_code == 200 and later.json()["decision"] == "superseded"
    [lisbon] = await current(api, namespace)
    assert lisbon["object_value"] == "Lisbon"
    # valid time is when it was said by the server's clock, not the (skewed) transaction stamp
    assert datetime.fromisoformat(lisbon["valid_from"]) <= datetime.now(timezone.utc)
    assert datetime.fromisoformat(lisbon["valid_from"]) >= before - timedelta(seconds=1)


async def test_backdated_recorded_at_and_explicit_valid_from_are_kept(api: httpx.AsyncClient, namespace: str) -> None:
    done = await remember(api, namespace, subject="user", predicate="works_at", object="Acme",
                          recorded_at="2020-01-01T00:00:00Z")
    assert done.status_code == 200
    [acme] = await current(api, namespace)
    assert acme["recorded_at"].startswith("2020-01-01") and acme["valid_from"].startswith("2020-01-01")
    done = await remember(api, namespace, subject="user", predicate="works_at", object="Initech",
                          valid_from="2031-01-01T00:00:00Z")  # a known future change: valid time may be ahead
    assert done.status_code == 200
    history = (await api.get(f"/v1/namespaces/{namespace}/facts/history", params={"subject": "user"})).json()
    assert [(f["object_value"], f["valid_from"][:10]) for f in history] == [("Acme", "2020-01-01"),
                                                                          ("Initech", "2031-01-01")]


async def test_future_recorded_at_is_a_value_error_in_python(memory: AsyncMemory, namespace: str) -> None:
    with pytest.raises(FieldError) as refused:
        await memory.remember(namespace, "user", "lives_in", "Oslo",
                              recorded_at=datetime(9999, 12, 31, tzinfo=timezone.utc))
    assert refused.value.field == "recorded_at" and isinstance(refused.value, ValueError)


# -- 3. value identity ------------------------------------------------------------------------
async def test_case_and_space_variants_reinforce_one_value(api: httpx.AsyncClient, namespace: str) -> None:
    first = await remember(api, namespace, subject="user", predicate="lives_in", object="Paris")
    assert first.json()["decision"] == "added"
    for variant in ("paris", "Paris ", "PARIS", "Ｐａｒｉｓ", "  pa\u00a0ris"[:0] + "paris"):
        again = await remember(api, namespace, subject="user", predicate="lives_in", object=variant)
        assert again.json()["decision"] == "reinforced", (variant, again.json())
    [paris] = await current(api, namespace, predicate="lives_in")
    assert paris["object_value"] == "Paris" and paris["reinforcement_count"] == 5
    for food in ("pizza", "Pizza", " PIZZA"):
        await remember(api, namespace, subject="user", predicate="likes", object=food)
    likes = await current(api, namespace, predicate="likes")
    assert [(f["object_value"], f["reinforcement_count"]) for f in likes] == [("pizza", 2)]


async def test_exact_predicates_keep_case_apart(memory: AsyncMemory, namespace: str) -> None:
    settings = load_settings()
    values = settings.memory.values.model_copy(update={"predicates": {"password_hint": "exact"}})
    exact = settings.model_copy(update={"memory": settings.memory.model_copy(update={"values": values})})
    from kg.core.models.requests import FactAssertion
    from kg.ingest.facts import FactWriter

    writer = FactWriter(memory.store, exact)

    async def remember(predicate: str, value: str) -> str:
        fact = FactAssertion(subject="user", predicate=predicate, object=value)
        return (await writer.remember(namespace, fact)).decision

    assert await remember("password_hint", "Blue") == "added"
    assert await remember("password_hint", "blue") == "added"
    assert await remember("likes", "Tea") == "added"
    assert await remember("likes", "tea") == "reinforced"


async def test_mcp_remember_variants_reinforce(memory: AsyncMemory, namespace: str) -> None:
    async with Client(build_server(LocalScope(opened=memory))) as client:
        decisions = []
        for city in ("Berlin", "berlin", "BERLIN "):
            result = await client.call_tool("remember", {"namespace": namespace, "subject": "user",
                                                         "predicate": "lives_in", "object": city})
            assert not result.is_error, result.content
            decisions.append(result.structured_content["decision"])
        assert decisions == ["added", "reinforced", "reinforced"]
        long_type = await client.call_tool("remember", {"namespace": namespace, "subject": "x" * 600,
                                                        "predicate": "likes", "object": "tea"})
        assert long_type.is_error and "subject" in str(long_type.content)


# -- 4. limits --------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value", [("subject_type", "t" * 16_000), ("object_type", "t" * 16_000),
                                         ("subject", "s" * 16_000), ("predicate", "p" * 16_000),
                                         ("object", "o" * 16_000)])
async def test_overlong_fact_fields_are_422_naming_the_field(api: httpx.AsyncClient, namespace: str,
                                                             field: str, value: str) -> None:
    body = {"subject": "user", "predicate": "likes", "object": "tea", field: value}
    refused = await remember(api, namespace, **body)
    assert refused.status_code == 422 and fields(refused) == [field], refused.text


async def test_overlong_fields_are_refused_in_python_too(memory: AsyncMemory, namespace: str) -> None:
    with pytest.raises(FieldError) as refused:
        await memory.remember(namespace, "user", "likes", "tea", subject_type="t" * 16_000)
    assert refused.value.field == "subject_type"


@pytest.mark.parametrize("session_id", ["a/b", "..", " padded", "100%", "q?x", "s" * 201])
async def test_unroutable_session_ids_are_refused_everywhere(api: httpx.AsyncClient, memory: AsyncMemory,
                                                              namespace: str, session_id: str) -> None:
    refused = await api.post(f"/v1/namespaces/{namespace}/messages",
                             json={"messages": [msg("hello", session_id=session_id)]})
    assert refused.status_code == 422 and fields(refused) == ["messages[0].session_id"], refused.text
    refused = await api.post(f"/v1/namespaces/{namespace}/corrections",
                             json={"session_id": session_id, "rule_text": "Answer in French."})
    assert refused.status_code == 422 and fields(refused) == ["session_id"], refused.text
    with pytest.raises(ValueError):
        await memory.add_turns(namespace, session_id, [{"role": "user", "text": "hi", "ts": "2025-05-01T12:00:00Z"}])


# -- 6. timestamps ----------------------------------------------------------------------------
@pytest.mark.parametrize("ts", [1714564800, 1714564800000, 1714564800.5, "1714564800"])
async def test_numeric_timestamps_are_refused_naming_the_field(api: httpx.AsyncClient, namespace: str,
                                                               ts: Any) -> None:
    refused = await api.post(f"/v1/namespaces/{namespace}/messages",
                             json={"messages": [{"role": "user", "text": "hi", "ts": ts}]})
    assert refused.status_code == 422 and fields(refused) == ["messages[0].ts"], refused.text
    refused = await remember(api, namespace, subject="user", predicate="likes", object="tea", valid_from=ts)
    assert refused.status_code == 422 and fields(refused) == ["valid_from"], refused.text


async def test_value_errors_name_their_field_not_body(api: httpx.AsyncClient, namespace: str) -> None:
    refused = await remember(api, namespace, subject="user", predicate="likes", object="   ")
    assert refused.status_code == 422 and fields(refused) == ["object"], refused.text
