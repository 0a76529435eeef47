"""The in-memory vector cache of small namespaces (`kg.queries.vectors`): the same ranking as an exact
scan of the store, and never stale: new turns, new context keys and a deleted namespace show at once."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kg import AsyncMemory
from kg.queries.recipes import FLAT, HIERARCHICAL, Recipe
from kg.queries.retrieve import Retriever
from tests.cypher_state import cypher_rows, statements_counted

START = datetime(2025, 3, 3, 9, tzinfo=timezone.utc)
LINES = [
    "We need a time-series database for the sensor project.",
    "TimescaleDB keeps SQL and the Postgres tooling we know.",
    "I booked a ryokan in Kyoto for the cherry blossom week.",
    "The JR office at Kansai airport sells rail passes.",
    "My morning run along the river felt heavy today.",
    "I grow cherry tomatoes and basil on the balcony.",
]
CONTEXT = Recipe(name="dense-context", lists=(("vector", "context"),))
QUERIES = ["which database for sensors?", "train passes in Japan", "running by the river", "balcony garden"]


async def _seed(memory: AsyncMemory, namespace: str) -> None:
    for s in range(3):
        await memory.add_turns(namespace, f"s{s}", [
            {"role": "user" if i % 2 == 0 else "assistant", "text": text, "ts": START + timedelta(days=s, seconds=i)}
            for i, text in enumerate(LINES[2 * s: 2 * s + 2])])


def _retriever(memory: AsyncMemory, cache_turns: int) -> Retriever:
    settings = memory.settings.memory.retrieval.model_copy(update={"vector_cache_turns": cache_turns})
    return Retriever(memory.store, memory.embedder, settings)


def _order(found: dict) -> list[str]:
    return sorted(found, key=lambda t: (-round(found[t].score, 4), t))


async def _ranked(retriever: Retriever, namespace: str, query: str, recipe: Recipe = FLAT, **kw) -> list[str]:
    return [t for t, _ in (await retriever.search(namespace, query, 10, recipe, **kw)).turns]


@pytest.mark.parametrize("recipe", [FLAT, CONTEXT])
async def test_cached_ranking_equals_a_store_scan(memory: AsyncMemory, namespace: str, recipe: Recipe) -> None:
    await _seed(memory, namespace)
    await memory.summarize_due(namespace, now=START + timedelta(days=30))  # context keys
    cached, scanned = _retriever(memory, 10_000), _retriever(memory, 0)
    assert cached.vectors is not None and scanned.vectors is None
    for q in QUERIES:
        a = (await cached.search(namespace, q, 6, recipe)).candidates
        b = (await scanned.search(namespace, q, 6, recipe)).candidates
        assert _order(a) == _order(b)  # equal scores may come in either order
        assert all(abs(a[t].score - b[t].score) < 1e-4 for t in a)
    as_of = START + timedelta(days=1, hours=1)  # sessions s0 and s1 only
    a = (await cached.search(namespace, "balcony garden", 6, recipe, as_of=as_of)).candidates
    b = (await scanned.search(namespace, "balcony garden", 6, recipe, as_of=as_of)).candidates
    assert len(a) == 4 and _order(a) == _order(b)


async def test_new_turns_context_keys_and_deletes_show_at_once(memory: AsyncMemory, namespace: str) -> None:
    await _seed(memory, namespace)
    retriever = _retriever(memory, 10_000)
    before = await _ranked(retriever, namespace, "quantum entanglement experiment")
    assert len(before) == 6

    await memory.add_turns(namespace, "s1", [{"role": "user", "text": "The quantum entanglement experiment worked!",
                                              "ts": START + timedelta(days=1, minutes=5, microseconds=123456)}])
    after = await _ranked(retriever, namespace, "quantum entanglement experiment")
    new = (await memory.turns(namespace, "s1"))[-1]
    assert after[0] == new.id and len(after) == 7
    [hit] = await memory.retrieve(namespace, "quantum entanglement experiment", k=1, recipe="flat")
    assert hit.turn == new and hit.turn.ts.microsecond == 123456  # hydrated exactly, to the microsecond

    rows = await cypher_rows(memory, "MATCH (s:Session {namespace: $ns}) RETURN s.id AS id, s.vectors_rev AS rev "
                                     "ORDER BY id", ns=namespace)
    revs = {r["id"]: r["rev"] for r in rows}
    await memory.summarize_due(namespace, now=START + timedelta(days=30))  # context keys bump every session
    rows = await cypher_rows(memory, "MATCH (s:Session {namespace: $ns}) RETURN s.id AS id, s.vectors_rev AS rev "
                                     "ORDER BY id", ns=namespace)
    assert all(r["rev"] > revs[r["id"]] for r in rows)
    fresh = (await retriever.search(namespace, "quantum entanglement", 7, CONTEXT)).candidates
    assert _order(fresh) == _order((await _retriever(memory, 0).search(namespace, "quantum entanglement", 7,
                                                                         CONTEXT)).candidates)

    await memory.delete_namespace(namespace)
    assert await _ranked(retriever, namespace, "quantum entanglement experiment") == []


async def test_a_search_checks_the_store_in_one_read_and_a_moved_namespace_in_the_same_read(
        memory: AsyncMemory, namespace: str) -> None:
    await _seed(memory, namespace)
    await memory.summarize_due(namespace, now=START + timedelta(days=30))  # summaries: their cache checks too
    retriever = _retriever(memory, 10_000)  # a cache of its own: this process's writes are not told to it
    await retriever.search(namespace, "rail passes", 6, HIERARCHICAL)
    with statements_counted() as still:
        await retriever.search(namespace, "rail passes", 6, HIERARCHICAL)
    # nothing moved: one read of each cache's stamp is all this search asks of the store
    assert still == {"retrieval/vector_stamp": 1, "retrieval/summary_stamp": 1}, still

    await memory.add_turns(namespace, "s1", [{"role": "user", "text": "The quantum entanglement experiment worked!",
                                              "ts": START + timedelta(days=1, minutes=5)}])
    with statements_counted() as moved:
        found = await _ranked(retriever, namespace, "quantum entanglement experiment", HIERARCHICAL)
    assert found[0] == (await memory.turns(namespace, "s1"))[-1].id  # seen at once
    # the stamp that moved brought the sessions' revisions in the same read; then the moved session's rows
    assert moved == {"retrieval/vector_stamp": 1, "retrieval/vector_rows": 1, "retrieval/summary_stamp": 1}, moved


async def test_least_recently_used_namespace_is_evicted(memory: AsyncMemory, namespace: str) -> None:
    other = f"{namespace}-b"
    try:
        await _seed(memory, namespace)
        await _seed(memory, other)
        retriever = _retriever(memory, 8)  # room for one namespace of 6 turns
        first = await _ranked(retriever, namespace, "rail passes")
        await _ranked(retriever, other, "rail passes")
        assert retriever.vectors is not None and retriever.vectors.namespaces() == [other]
        assert await _ranked(retriever, namespace, "rail passes") == first  # reloaded, same answer
    finally:
        await memory.delete_namespace(other)


async def test_token_vectors_are_held_within_their_budget(memory: AsyncMemory, namespace: str) -> None:
    """The late interaction tokens the cache holds, written through it or loaded, are the store's; past
    `vector_cache_late_mb` the least recently searched namespace goes, as past `vector_cache_turns`."""
    if memory.late_encoder is None:
        pytest.skip("late interaction is off (the late extra is not installed)")
    other = f"{namespace}-b"
    try:
        await _seed(memory, namespace)
        await memory.retrieve(namespace, "balcony garden", k=3)  # the memory's cache holds it
        await memory.add_turns(namespace, "s3", [{"role": "user", "text": "The greenhouse timer broke again.",
                                                  "ts": START + timedelta(days=4)}])  # written through the cache
        await _seed(memory, other)
        stored = {r["id"]: r["tokens"] for r in await cypher_rows(
            memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.id AS id, t.late_tokens AS tokens", ns=namespace)}
        cache = memory.vector_sink()
        assert cache is not None and cache.late_tokens(namespace, sorted(stored)) == stored
        fresh = _retriever(memory, 10_000)
        await fresh.search(namespace, "balcony garden", 3, FLAT)
        assert fresh.vectors is not None and fresh.vectors.late_tokens(namespace, sorted(stored)) == stored
        one = sum(len(t) for t in stored.values())
        fresh.vectors.max_late_bytes = one + 100  # room for the tokens of one namespace only
        await fresh.search(other, "balcony garden", 3, FLAT)
        assert fresh.vectors.namespaces() == [other]
    finally:
        await memory.delete_namespace(other)


async def test_turn_vectors_from_the_cache_match_the_store(memory: AsyncMemory, namespace: str) -> None:
    """Recency within a topic and recall read a search's head turns' roles and vectors: from the
    cache they are the store's (unit length), for turns written through the cache and reloaded alike,
    a long turn with its later parts."""
    await _seed(memory, namespace)
    await memory.retrieve(namespace, "balcony garden", k=3, recipe="flat")  # the memory's cache holds it
    long = " ".join(f"Paragraph {i} about the greenhouse irrigation timer and its valves." for i in range(60))
    await memory.add_turns(namespace, "s3", [{"role": "assistant", "text": long, "ts": START + timedelta(days=4)}])
    stored = {r["id"]: r for r in await cypher_rows(
        memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.id AS id, t.role AS role, t.embedding AS embedding, "
                "t.passage_embeddings AS passages", ns=namespace)}
    assert any(r["passages"] for r in stored.values())  # the long turn has later parts
    fresh = _retriever(memory, 10_000)
    await fresh.search(namespace, "balcony garden", 6, FLAT)
    for cache in (memory.vector_sink(), fresh.vectors):  # the long turn written through / loaded
        assert cache is not None
        rows = cache.turn_vectors(namespace, sorted(stored))
        assert rows is not None and set(rows) == set(stored)
        for tid, (rid, role, vector, parts) in rows.items():
            want = stored[tid]
            assert (rid, role) == (tid, want["role"])
            assert np.allclose(vector, np.asarray(want["embedding"]) / np.linalg.norm(want["embedding"]), atol=1e-5)
            if want["passages"]:
                dim = len(vector)
                expect = np.asarray(want["passages"], dtype=np.float64).reshape(-1, dim)
                expect /= np.linalg.norm(expect, axis=1, keepdims=True)
                assert np.allclose(np.asarray(parts).reshape(-1, dim), expect, atol=1e-5)
            else:
                assert parts is None
    assert fresh.vectors.turn_vectors(namespace, ["no-such-turn"]) is None  # the caller reads the store
