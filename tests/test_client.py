"""One scenario suite, two doors: every scenario runs on `AsyncMemory` and on `kg.AsyncClient`
(over the HTTP app, served in this process) and must give the same results."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, AsyncIterator

import httpx
import pytest
from http_client import serving, settings_with

from kg import AsyncClient, AsyncMemory, Client
from kg.client import AccessDenied, InvalidRequest, NotFound, Unavailable
from kg.http import create_app

T0 = datetime(2025, 4, 1, 9, 0, tzinfo=timezone.utc)
TURNS = [
    {"role": "user", "speaker": "Maya", "text": "We picked TimescaleDB for the sensor data.", "ts": T0},
    {"role": "assistant", "text": "Noted: TimescaleDB, with a 90-day retention.", "ts": T0 + timedelta(minutes=1)},
    {"role": "user", "speaker": "Maya", "text": "I moved to Lisbon last month.", "ts": T0 + timedelta(minutes=2)},
]


@pytest.fixture(params=["memory", "client"])
async def door(request: pytest.FixtureRequest, memory: AsyncMemory) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield memory
        return
    app = create_app(settings_with(keys={}), memory=memory)
    async with serving(app), AsyncClient("http://kg.test", transport=httpx.ASGITransport(app=app)) as client:
        yield client


@pytest.fixture
def ns(namespace: str) -> str:
    return namespace  # conftest's: a fresh namespace, deleted afterwards


def plain(model: Any, *drop: str) -> Any:
    """A model as data, without the fields that differ between two namespaces or two runs."""
    if isinstance(model, list):
        return [plain(m, *drop) for m in model]
    data = model.model_dump()
    for name in ("id", "namespace", *drop):
        data.pop(name, None)
    return data


async def scenario_sessions(door: Any, ns: str) -> dict[str, Any]:
    report = await door.add_turns(ns, "s1", TURNS)
    again = await door.add_turns(ns, "s1", TURNS)
    turn = await door.add_message(ns, "user", "Also: use uv, not pip.", ts=T0 + timedelta(minutes=3), speaker="Maya")
    sessions = await door.sessions(ns)
    turns = await door.turns(ns, "s1")
    return {
        "report": (report.received, report.written, report.existing, report.sessions),
        "again": (again.written, again.existing),
        "turn": (turn.session_id, turn.idx, turn.text, turn.speaker),
        "sessions": [(s.id, s.message_count) for s in sessions],
        "session": plain(await door.session(ns, "s1")),
        "missing": await door.session(ns, "nope"),
        "turns": [(t.idx, t.role, t.speaker, t.text, t.ts) for t in turns],
        "no_turns": await door.turns(ns, "nope"),
        "default": [h.turn.text for h in await door.search_turns(ns, "which database for sensors?", k=2)],
        "flat": [h.turn.text for h in await door.search_turns(ns, "which database for sensors?", k=2, recipe="flat")],
        "bm25": [h.turn.text for h in await door.search_turns(ns, "TimescaleDB", k=5, recipe="bm25")],
        "retrieve": [h.turn.text for h in await door.retrieve(ns, "TimescaleDB retention", k=2, recipe="hybrid")],
        "sessions_hit": [h.session.id for h in await door.search_sessions(ns, "database", k=1)],
        "memories": [h.kind for h in await door.search_memories(ns, "database", k=3)],
        "recall": len(await door.recall(ns, "Lisbon", k=3)),
    }


async def scenario_facts(door: Any, ns: str) -> dict[str, Any]:
    utc = timezone.utc
    first = await door.remember(ns, "Maya", "lives_in", "Porto", valid_from=datetime(2020, 1, 1, tzinfo=utc))
    second = await door.remember(ns, "Maya", "lives_in", "Lisbon", valid_from=datetime(2024, 6, 1, tzinfo=utc))
    same = await door.remember(ns, "maya", "lives_in", "Lisbon", valid_from=datetime(2024, 7, 1, tzinfo=utc))
    return {
        "decisions": [first.decision, second.decision, same.decision],
        "now": [f.object_value for f in await door.facts(ns, "Maya", "lives_in")],
        "then": [f.object_value for f in await door.facts(ns, "Maya", as_of=datetime(2023, 1, 1, tzinfo=utc))],
        "history": [(f.object_value, f.valid_from, f.valid_to, f.status) for f in await door.history(ns, "Maya")],
    }


async def scenario_rules(door: Any, ns: str) -> dict[str, Any]:
    added = await door.add_correction(ns, "s1", "Prefer uv over pip.", correction_type="tool_usage", seen_at=T0)
    again = await door.add_correction(ns, "s2", "Use uv instead of pip.", correction_type="tool_usage",
                                      seen_at=T0 + timedelta(days=1))
    confirmed = await door.confirm_rule(ns, added.correction_id)
    rules = await door.core_rules(ns)
    with pytest.raises(KeyError):
        await door.confirm_rule(ns, "cor_missing")
    return {
        "decisions": [added.decision, again.decision, again.reinforcement_count],
        "confirmed": (confirmed.status, confirmed.rule_text),
        "rules": [r.rule_text for r in rules.rules],
        "render": rules.render(),
        "corrections": [(c.status, c.reinforcement_count) for c in await door.corrections(ns)],
    }


async def scenario_summaries_and_jobs(door: Any, ns: str) -> dict[str, Any]:
    await door.add_turns(ns, "s1", TURNS)
    summary = await door.close_session(ns, "s1")
    job = await door.enqueue_job("maintain_corrections", ns, "nightly")
    again = await door.enqueue_job("maintain_corrections", ns, "nightly")
    listed = await door.jobs(namespace=ns)
    return {
        "summary": (summary.kind, summary.version, summary.model, summary.message_range),
        "summaries": [(s.kind, s.version, s.text) for s in await door.summaries(ns, "s1")],
        "job": (job.kind, job.status, job.target, again.id == job.id),
        "listed": [j.kind for j in listed],
        "get": (await door.job(job.id)).kind,
        "retry": (await door.retry_job(job.id)).status,
    }


async def scenario_relationships_and_forgetting(door: Any, ns: str) -> dict[str, Any]:
    await door.add_turns(ns, "s1", TURNS)
    first = await door.relate(ns, "Maya", "works_for", "Acme", valid_from=T0)
    second = await door.relate(ns, "Maya", "works_for", "Globex", valid_from=T0 + timedelta(days=30))
    then = await door.relationships(ns, "Maya", "works_for", as_of=T0 + timedelta(days=1))
    now = await door.relationships(ns, "Maya", "works_for")
    await door.remember(ns, "Maya", "lives_in", "Lisbon", valid_from=T0)
    erased = await door.erase_subject(ns, "Maya")
    gone = await door.facts(ns, "Maya")
    session = await door.erase_session(ns, "s1")
    return {"decisions": (first.decision, second.decision), "then": [r.object for r in then],
            "now": [r.object for r in now], "subject": (erased.scope, erased.namespace == ns), "facts_after": gone,
            "session": (session.scope, await door.session(ns, "s1"))}


SCENARIOS = [scenario_sessions, scenario_facts, scenario_rules, scenario_summaries_and_jobs,
             scenario_relationships_and_forgetting]
ANSWERS: dict[str, dict[str, Any]] = {}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
async def test_scenario_gives_the_same_results_on_both_doors(scenario: Any, memory: AsyncMemory, door: Any,
                                                            ns: str) -> None:
    answer = await scenario(door, ns)
    other = ANSWERS.setdefault(scenario.__name__, answer)
    assert answer == other, f"{type(door).__name__} differs from the first door"


async def test_both_doors_refuse_what_is_invalid(door: Any, ns: str) -> None:
    await door.add_turns(ns, "s1", TURNS[:1])
    with pytest.raises(ValueError):
        await door.search_turns(ns, "x", k=0)
    with pytest.raises(ValueError):
        await door.enqueue_job("no_such_kind", ns, "t")
    with pytest.raises(ValueError):  # pydantic's ValidationError, before anything is sent
        await door.add_turns(ns, "s1", [{"role": "robot", "text": "hi", "ts": T0}])


async def test_client_errors_are_python_exceptions(memory: AsyncMemory, ns: str) -> None:
    app = create_app(settings_with(keys={"k-acme": [ns]}), memory=memory)
    async with serving(app):
        transport = httpx.ASGITransport(app=app)
        async with AsyncClient("http://kg.test", transport=transport) as anonymous:
            with pytest.raises(AccessDenied) as denied:
                await anonymous.sessions(ns)
            assert denied.value.status == 401 and isinstance(denied.value, PermissionError)
        async with AsyncClient("http://kg.test", api_key="k-acme", transport=transport) as client:
            with pytest.raises(PermissionError):
                await client.sessions("other-namespace")
            with pytest.raises(NotFound) as missing:  # nothing stored yet: a 404 naming the namespace
                await client.sessions(ns)
            assert missing.value.field == "namespace" and isinstance(missing.value, KeyError)
            with pytest.raises(InvalidRequest) as invalid:
                await client.remember(ns, "Maya", "lives_in", "x" * 3000)
            assert invalid.value.field == "object"
            with pytest.raises(ValueError, match="now"):
                await client.close_session(ns, "s1", now=T0)
    async with AsyncClient("http://127.0.0.1:9") as nobody:  # nothing listens on the discard port
        with pytest.raises(Unavailable) as down:
            await nobody.sessions(ns)
        assert isinstance(down.value, ConnectionError)


def test_the_synchronous_client_has_every_method() -> None:
    names = {n for n in dir(AsyncClient) if not n.startswith("_") and n not in ("open", "close")}
    assert names <= set(dir(Client))
    with Client("http://127.0.0.1:9") as client, pytest.raises(ConnectionError):
        client.sessions("acme")


class Refusing(httpx.AsyncBaseTransport):
    """The app behind a door that first refuses `times` requests as backpressure does: 503 with
    Retry-After (0 s here, so the test does not wait)."""

    def __init__(self, app: Any, times: int, retry_after: str = "0") -> None:
        self.inner, self.left, self.retry_after, self.seen = httpx.ASGITransport(app=app), times, retry_after, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen += 1
        if self.left > 0:
            self.left -= 1
            return httpx.Response(503, headers={"Retry-After": self.retry_after},
                                  json={"error": "overloaded", "message": "retry later"})
        return await self.inner.handle_async_request(request)


async def test_the_client_sends_a_refused_request_again_after_retry_after(memory: AsyncMemory, ns: str) -> None:
    app = create_app(settings_with(keys={}), memory=memory)
    async with serving(app):
        refusing = Refusing(app, times=2)
        async with AsyncClient("http://kg.test", transport=refusing) as client:
            report = await client.add_turns(ns, "s1", TURNS)
        assert (report.written, refusing.seen) == (3, 3)  # two refusals, then the write: stored once
        assert [t.text for t in await memory.turns(ns, "s1")] == [t["text"] for t in TURNS]
        stubborn = Refusing(app, times=5)
        async with AsyncClient("http://kg.test", transport=stubborn, retries=2) as client:
            with pytest.raises(Unavailable) as refused:
                await client.sessions(ns)
        assert (refused.value.status, stubborn.seen) == (503, 3)  # the first try and 2 retries
        too_long = Refusing(app, times=1, retry_after="120")  # longer than a caller should be held
        async with AsyncClient("http://kg.test", transport=too_long) as client:
            with pytest.raises(Unavailable):
                await client.sessions(ns)
        assert too_long.seen == 1
