"""Maintenance statements that take an optional namespace (`kg reembed`, `kg reindex`, the sweeps,
`kg jobs list`) read one tenant's rows only when given one: what they cost for namespace A does not
move when namespace B grows, and without a namespace they still cover every tenant."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from kg import AsyncMemory

T0 = datetime(2025, 3, 1, 9, tzinfo=timezone.utc)
PAGE = {"after": "", "missing": None, "limit": 256}
SESSIONS = {"session_id": None, "since": None}
STATEMENTS: dict[str, dict[str, Any]] = {
    "turns/for_reembed": PAGE,
    "turns/contexts_for_reembed": {**PAGE, "width": 2},
    "summaries/for_reembed": PAGE,
    "entities/names_for_reembed": PAGE,
    "corrections/for_reembed": PAGE,
    "jobs/sessions_select": SESSIONS,
    "jobs/extractions_stale": {**SESSIONS, "version": "another-extractor"},
    "jobs/summaries_stale": {**SESSIONS, "model": "another-model", "prompt_versions": [], "embedding_model": "x"},
    "jobs/namespaces_unembedded": {"late": True},
    "jobs/list": {"status": None, "kind": None, "limit": 50},
    "jobs/correction_namespaces": {},
}


@pytest.fixture
async def other(memory: AsyncMemory) -> AsyncIterator[str]:
    ns = f"test-{uuid.uuid4().hex[:12]}"
    yield ns
    await memory.delete_namespace(ns)


async def session(memory: AsyncMemory, namespace: str, session_id: str, start: datetime, turns: int) -> None:
    await memory.add_turns(namespace, session_id, [
        {"role": "user" if i % 2 == 0 else "assistant", "speaker": "Maya" if i % 2 == 0 else None,
         "text": f"Maya visited Porto with Nuno on trip {session_id} day {i} and met Ana there.",
         "ts": start + timedelta(minutes=i)}
        for i in range(turns)])
    await memory.close_session(namespace, session_id)
    await memory.index_session(namespace, session_id)


def db_hits(plan: dict[str, Any]) -> int:
    return int(plan.get("dbHits", 0)) + sum(db_hits(child) for child in plan.get("children", []))


async def profiled(memory: AsyncMemory, name: str, namespace: str | None, replan: str = "default",
                   **params: Any) -> tuple[int, list[dict[str, Any]]]:
    """`replan`: "force" plans the statement afresh, "skip" runs the plan cached (so two readings compare
    two sizes under one plan, not two plans the statistics chose: 5.26 picks between equally local
    plans by them)."""
    store = memory.store
    records, summary, _ = await store.driver.execute_query(
        f"CYPHER replan={replan} PROFILE " + store._text(name), {**STATEMENTS[name], "namespace": namespace, **params},
        database_=store.database)
    assert summary.profile is not None
    return db_hits(summary.profile), [r.data() for r in records]


def namespaces_in(rows: list[dict[str, Any]]) -> set[str]:
    return {r["namespace"] for r in rows if "namespace" in r}


async def test_a_namespace_costs_the_same_whatever_another_holds(memory: AsyncMemory, namespace: str,
                                                                   other: str) -> None:
    await session(memory, namespace, "a1", T0, 6)
    await session(memory, other, "b0", T0, 6)
    before = {name: await profiled(memory, name, namespace, "force") for name in STATEMENTS}
    for i in range(1, 5):  # the other tenant grows: 4 more sessions, 32 turns, their summaries
        await session(memory, other, f"b{i}", T0 + timedelta(days=i), 8)

    for name in STATEMENTS:
        hits, rows = await profiled(memory, name, namespace, "skip")
        assert (hits, rows) == before[name], f"{name}: namespace {namespace}'s cost moved with another's size"
        assert namespaces_in(rows) <= {namespace}, f"{name} returned another namespace's rows"
    assert len(before["turns/for_reembed"][1]) == 6
    for name in ("turns/for_reembed", "turns/contexts_for_reembed"):  # 6 turns each
        whole, rows = await profiled(memory, name, namespace)
        first, page = await profiled(memory, name, namespace, limit=1)
        assert page == rows[:1] and first < whole, f"{name}: a page of one read the namespace's every row"


async def test_without_a_namespace_every_tenant_is_covered(memory: AsyncMemory, namespace: str,
                                                           other: str) -> None:
    await session(memory, namespace, "a1", T0, 4)
    await session(memory, other, "b1", T0, 4)
    for name in ("jobs/sessions_select", "jobs/summaries_stale"):
        _, rows = await profiled(memory, name, None)
        assert {namespace, other} <= namespaces_in(rows), name
        _, mine = await profiled(memory, name, namespace)
        assert mine == [r for r in rows if r["namespace"] == namespace], name
    ids: set[str] = set()
    after = ""
    while True:  # every turn of both, a page at a time, in id order
        store = memory.store
        page = await store.read("turns/for_reembed", namespace=None, after=after, missing=None, limit=3)
        if not page:
            break
        assert [r["id"] for r in page] == sorted(r["id"] for r in page)
        ids.update(r["id"] for r in page)
        after = page[-1]["id"]
    for ns in (namespace, other):
        assert {t.id for t in await memory.turns(ns, "a1" if ns == namespace else "b1")} <= ids
