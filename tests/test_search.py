"""Turn search through the recipes (the one retrieval stack), inside one namespace."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from kg import AsyncMemory
from kg.queries.candidates import NamespaceSizes
from kg.queries.recipes import HIERARCHICAL
from kg.queries.retrieve import Retriever
from kg.queries.turns import bounded, scoped

T0 = datetime(2025, 5, 1, 12, 0, tzinfo=timezone.utc)
TEXTS = [
    "We decided to use TimescaleDB on Postgres 16 for the analytics service.",
    "My daughter starts school in September.",
    "The weather in Lisbon has been lovely this week.",
    "Please always write Python with pathlib instead of os.path.",
]


async def seed(memory: AsyncMemory, namespace: str, texts: list[str]) -> None:
    await memory.add_turns(namespace, "s1", [
        {"role": "user", "text": t, "ts": T0 + timedelta(minutes=i)} for i, t in enumerate(texts)])


async def test_search_turns_runs_the_configured_recipe(memory: AsyncMemory, namespace: str) -> None:
    await seed(memory, namespace, TEXTS)
    hits = await memory.search_turns(namespace, "which database did we choose?", k=2)
    assert hits[0].turn.text == TEXTS[0]
    assert hits[0].recipe == memory.settings.memory.retrieval.strategy == "hierarchical"
    assert hits[0].score >= hits[1].score
    assert [h.turn.id for h in hits] == [h.turn.id for h in await memory.retrieve(namespace, "which database did we "
                                                                                    "choose?", k=2)]


async def test_flat_ranks_by_meaning_and_bm25_by_words(memory: AsyncMemory, namespace: str) -> None:
    await seed(memory, namespace, TEXTS)
    hits = await memory.search_turns(namespace, "file system paths in code", k=1, recipe="flat")
    assert hits[0].turn.text == TEXTS[3] and hits[0].recipe == "flat"
    hits = await memory.search_turns(namespace, "Lisbon weather", k=3, recipe="bm25")
    assert [h.turn.text for h in hits] == [TEXTS[2]]  # BM25 returns only matching turns
    assert await memory.search_turns(namespace, "   ", k=3, recipe="bm25") == []
    # the old method names still mean the same ranking
    assert [h.turn.id for h in await memory.search_turns(namespace, "Lisbon weather", k=3, recipe="fulltext")] == \
        [h.turn.id for h in hits]
    assert (await memory.search_turns(namespace, "paths", k=1, recipe="vector"))[0].recipe == "flat"


async def test_search_never_crosses_namespaces(memory: AsyncMemory, namespace: str) -> None:
    other = namespace + "-other"
    try:
        await seed(memory, other, ["We decided to use TimescaleDB for analytics, in the other tenant."])
        await seed(memory, namespace, TEXTS[1:])
        for recipe in ("flat", "bm25", "hybrid", "hierarchical"):
            hits = await memory.search_turns(namespace, "TimescaleDB analytics", k=10, recipe=recipe)
            assert all(h.turn.namespace == namespace for h in hits)
            assert not any("other tenant" in h.turn.text for h in hits)
    finally:
        await memory.delete_namespace(other)


async def test_bad_search_arguments_are_refused(memory: AsyncMemory, namespace: str) -> None:
    import pytest

    with pytest.raises(ValueError, match="unknown retrieval recipe 'magic'"):
        await memory.search_turns(namespace, "x", 3, recipe="magic")
    with pytest.raises(ValueError, match="k must be"):
        await memory.search_turns(namespace, "x", 0)


async def test_a_long_query_is_bounded_for_lucene(memory: AsyncMemory, namespace: str) -> None:
    """Lucene refuses more than 1024 clauses; each word is a clause per field. 1,600 characters of
    distinct words used to fail on the hierarchical recipe."""
    await seed(memory, namespace, TEXTS)
    await memory.summarize_due(namespace, now=T0 + timedelta(days=1))
    words = " ".join(f"w{i}x{i * 7}" for i in range(400))[:1600] + " Lisbon weather"
    for recipe in ("bm25", "hybrid", "hierarchical"):
        hits = await memory.search_turns(namespace, words, k=3, recipe=recipe)
        assert all(h.turn.namespace == namespace for h in hits)
    assert bounded("a b A c", max_terms=2) == "a b"
    assert bounded("short query stays as it is?") == "short query stays as it is?"


async def test_bm25_is_scoped_to_the_namespace_inside_lucene(memory: AsyncMemory, namespace: str) -> None:
    """The namespace clause narrows Lucene itself (migration 0008): a namespace whose tokens are a prefix
    of another's, one made only of stop words, and a query of only stop words all behave."""
    prefixed, stopwords = namespace + "-staging", "the"
    await memory.delete_namespace(stopwords)
    try:
        await seed(memory, prefixed, ["Lisbon weather report from the staging tenant."] * 3)
        await seed(memory, stopwords, ["Lisbon weather report from the stop-word tenant."])
        await seed(memory, namespace, TEXTS)
        for ns, expected in ((namespace, TEXTS[2]), (stopwords, "Lisbon weather report from the stop-word tenant.")):
            for recipe in ("bm25", "hybrid"):
                hits = await memory.retrieve(ns, "Lisbon weather", k=5, recipe=recipe)
                assert hits and hits[0].turn.text == expected and {h.turn.namespace for h in hits} == {ns}
        assert [h.turn.text for h in await memory.search_turns(namespace, "Lisbon", k=5, recipe="bm25")] == \
            [TEXTS[2]]
        assert await memory.retrieve(namespace, "the and of", k=5, recipe="bm25") == []  # only stop words
    finally:
        await memory.delete_namespace(prefixed)
        await memory.delete_namespace(stopwords)


def test_a_namespace_alone_in_the_index_needs_no_lucene_clause() -> None:
    assert scoped('acme "eu"', ["text"], "Lisbon") == '+namespace:"acme \\"eu\\""^0 +(text:(Lisbon))'
    assert scoped("acme", ["text", "keywords"], "Lisbon", alone=True) == "+(text:(Lisbon) keywords:(Lisbon))"
    assert scoped("acme", ["text"], "\\?", alone=True) == ""  # nothing to search for


async def test_a_stale_alone_never_leaks_other_tenants(memory: AsyncMemory, namespace: str) -> None:
    """Sizes that wrongly say the namespace is the index's only tenant (a cache older than a new
    tenant) drop the Lucene clause; the Cypher still keeps every hit inside the namespace."""
    other = namespace + "-other"
    try:
        await seed(memory, other, ["Lisbon weather report from another tenant."] * 30)
        await seed(memory, namespace, TEXTS)
        await memory.summarize_due(namespace, now=T0 + timedelta(days=1))
        await memory.summarize_due(other, now=T0 + timedelta(days=1))

        class Alone(NamespaceSizes):
            async def counts(self, ns: str) -> tuple[int, int]:
                return 10_000, 10_000  # alone, and large: the index path

        retriever = Retriever(memory.store, memory.embedder, memory.settings.memory.retrieval)
        retriever.sizes = Alone(memory.store)
        ours = {t.id for t in await memory.turns(namespace, "s1")}  # both tenants call their session s1
        found = await retriever.search(namespace, "Lisbon weather", 3, HIERARCHICAL)
        assert found.turns and found.turns[0][0] in ours
        assert set(found.candidates) <= ours and {t for t, _ in found.turns} <= ours
    finally:
        await memory.delete_namespace(other)
