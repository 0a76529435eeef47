"""A BM25 list reads Lucene's best hits only (`kg.queries.candidates.best_hits`), yet gives what
reading every hit gives: ties at the cut rank by turn id, and hits the filters drop (`as_of`) are
made up from beyond the bound. A namespace the in-memory cache holds is scored without Lucene
(tests/test_keywords.py), so these run on the index path, as a namespace above `exact_max_turns` does."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from kg import AsyncMemory
from kg.core.settings.memory import VectorSearchSettings
from kg.queries.candidates import BM25_BOUND, BM25_SLACK
from kg.queries.recipes import BM25
from kg.queries.retrieve import Retriever

START = datetime(2025, 5, 5, 8, tzinfo=timezone.utc)
TIED = "Red kettle."  # the same words and length: every copy scores the same
MANY = 260


def _bound(memory: AsyncMemory) -> int:
    return BM25_BOUND * memory.settings.memory.retrieval.candidates + BM25_SLACK


async def _best(memory: AsyncMemory, namespace: str, as_of: datetime | None = None) -> list[str]:
    """The ids of the 5 best turns for "red kettle" on the index path."""
    retriever = Retriever(memory.store, memory.embedder, memory.settings.memory.retrieval,
                          vector_search=VectorSearchSettings(exact_max_turns=0))
    return [t for t, _ in (await retriever.search(namespace, "red kettle", 5, BM25, as_of=as_of)).turns]


async def _many(memory: AsyncMemory, namespace: str, at: datetime) -> None:
    assert MANY > _bound(memory)  # more hits than one bounded read gives
    await memory.add_turns(namespace, "s-many", [
        {"role": "user", "text": TIED, "ts": at + timedelta(seconds=i)} for i in range(MANY)])


async def test_tied_hits_beyond_the_bound_rank_by_id(memory: AsyncMemory, namespace: str) -> None:
    await _many(memory, namespace, START)
    ids = sorted(t.id for t in await memory.turns(namespace, "s-many"))
    assert await _best(memory, namespace) == ids[:5]  # the lowest ids of all 260, wherever Lucene cut
    hits = await memory.retrieve(namespace, "red kettle", k=5, recipe="bm25")
    assert [h.turn.id for h in hits] == ids[:5]  # and from the namespace's own statistics alike


async def test_hits_the_filter_drops_are_made_up_from_beyond_the_bound(memory: AsyncMemory, namespace: str) -> None:
    # the best-scoring hits all come after `as_of`; the only ones before it score lower (longer turns)
    await _many(memory, namespace, START + timedelta(days=30))
    early = ["The red kettle on the stove whistles every single morning at seven.",
             "My red kettle needs descaling because the water here is very hard."]
    await memory.add_turns(namespace, "s-early", [
        {"role": "user", "text": text, "ts": START + timedelta(minutes=i)} for i, text in enumerate(early)])
    texts = {t.id: t.text for s in ("s-many", "s-early") for t in await memory.turns(namespace, s)}
    found = await _best(memory, namespace, as_of=START + timedelta(days=1))
    assert sorted(texts[t] for t in found) == sorted(early)
    assert len(await _best(memory, namespace)) == 5
    hits = await memory.retrieve(namespace, "red kettle", k=5, recipe="bm25", as_of=START + timedelta(days=1))
    assert sorted(h.turn.text for h in hits) == sorted(early)
