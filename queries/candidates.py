"""The ranked lists retrieval fuses, read from the store: turns by key and method, summaries,
sessions in a time window; and the hydration of what was chosen."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from kg.core.models.recall import Summary, summary_from_props
from kg.core.models.turns import Role, Session, Turn, attachments_of
from kg.core.models.values import native_props
from kg.core.settings.memory import VectorSearchSettings
from kg.core.store.store import Store
from kg.core.vocabulary import Trust

from .analysis import TimeWindow
from .recipes import Key, Method
from .turns import scoped

# (method, key) -> (index, property)
INDEXES: dict[tuple[Method, Key], tuple[str, str]] = {
    ("vector", "turn"): ("turn_embedding", "embedding"),
    ("vector", "context"): ("turn_context_embedding", "context_embedding"),
    ("fulltext", "turn"): ("turn_key_text", "key_text"),
    ("fulltext", "context"): ("turn_context_text", "context_text"),
}
SUMMARY_FIELDS = ("text", "keywords")
SIZE_TTL_S = 30.0
BM25_BOUND, BM25_SLACK, BM25_GROWTH = 2, 20, 8  # Lucene hits read per BM25 list: 2 x depth + 20, then 8x that


@dataclass(frozen=True)
class Candidate:
    id: str
    session_id: str
    idx: int
    speaker: str | None
    ts: datetime
    score: float
    follows_question: bool  # a short reply to the question before it (kg.ingest.summaries.keys.short_replies)
    role: Role | None  # who said it ("user", "assistant"; `Boosts.role`)
    chars: int  # its own text's length in characters (`Recipe.long_turn_chars`)
    keyed: bool  # it has a context key of its own (its session closed); else its own key stands in


def _candidates(row: dict[str, Any]) -> list[Candidate]:
    """From the one row of a candidate query: `rows` of [id, session, idx, speaker, ts µs, score, follows, role,
    characters, keyed]."""
    return [Candidate(tid, session_id, idx, speaker, from_epoch_us(ts), float(score), bool(follows), role, chars,
                      keyed)
            for tid, session_id, idx, speaker, ts, score, follows, role, chars, keyed in row.get("rows", [])]


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def from_epoch_us(us: int) -> datetime:
    """A UTC datetime from epoch microseconds (the candidate queries' `ts`), exactly."""
    return _EPOCH + timedelta(microseconds=us)


async def turn_list(
    store: Store, method: Method, key: Key, namespace: str, *, vector: list[float] | None, lucene: str,
    depth: int, exact: bool, as_of: datetime | None, fetch: int = 0, alone: bool = False,
) -> list[Candidate]:
    """`fetch`: index hits to ask for on the approximate path (default: `depth` and a fifth);
    `alone`: the namespace is the index's only tenant (`kg.queries.turns.scoped`)."""
    index, prop = INDEXES[(method, key)]
    if method == "fulltext":
        query = scoped(namespace, [prop], lucene, alone)
        if not query:
            return []
        row = await best_hits(store, "retrieval/fulltext", "rows", 5, depth, index=index, query=query,
                              namespace=namespace, as_of=as_of)
    elif exact:
        row = await store.read_row("retrieval/vector_exact", property=prop, vector=vector,
                                   namespace=namespace, k=depth, as_of=as_of)
    else:
        row = await store.read_row("retrieval/vector_index", index=index, fetch=fetch or overfetch(depth, 1, 1),
                                   vector=vector, namespace=namespace, k=depth, as_of=as_of)
    return _candidates(row)


async def best_hits(store: Store, name: str, column: str, score_at: int, depth: int, **params: Any
                    ) -> dict[str, Any]:
    """A BM25 query's row (`retrieval/fulltext`, `retrieval/summaries_fulltext`) read from Lucene's best
    hits (`BM25_BOUND` x `depth` + `BM25_SLACK`) instead of every hit: a query of common words matches
    most of a large namespace, and reading every match cost 180 ms a list at 100k turns. The result is
    the one every hit gives: when the bound was reached and the filters (namespace, `as_of`, current
    versions) left fewer than `depth`, or the last kept hit scores what Lucene's last one does (a tie
    the bound may have cut; ties rank by id), it reads again, `BM25_GROWTH` times as many, then every hit."""
    limit = BM25_BOUND * depth + BM25_SLACK
    for bound in (limit, limit * BM25_GROWTH):
        row = await store.read_row(name, options={"limit": bound}, k=depth, **params)
        kept = row.get(column) or []
        if row.get("raw", 0) < bound or (len(kept) == depth and kept[-1][score_at] != row["floor"]):
            return row
    return await store.read_row(name, options={}, k=depth, **params)


async def fallback_turn_list(store: Store, namespace: str, *, vector: list[float], depth: int, fetch: int,
                             as_of: datetime | None) -> list[Candidate]:
    """Dense candidates among the turns the fallback embedder embedded (kg.core.embedders.fallback), by
    its own index: `vector` is the query embedded by that model."""
    row = await store.read_row("retrieval/fallback_vector_index", fetch=fetch, vector=vector, namespace=namespace,
                               k=depth, as_of=as_of)
    return _candidates(row)


async def turn_lists_in_sessions(
    store: Store, keys: list[Key], namespace: str, sessions: list[str], *, vector: list[float], depth: int,
    as_of: datetime | None,
) -> tuple[list[list[Candidate]], dict[str, Turn]]:
    """Exact cosine on each of `keys` inside `sessions` (stage 2 when stage 1 used the approximate
    index), one list per key, in one statement; with the turns found, hydrated."""
    properties = [INDEXES[("vector", key)][1] for key in keys]
    row = await store.read_row("retrieval/vector_sessions", properties=properties, vector=vector,
                               namespace=namespace, sessions=sessions, k=depth, as_of=as_of)
    by_key: dict[int, list[Candidate]] = {}
    turns: dict[str, Turn] = {}
    for i, rows in row.get("lists", []):
        found = by_key.setdefault(i, [])
        for tid, session_id, idx, speaker, ts, score, follows, role, keyed, text, external_id, model, *attachments \
                in rows:
            found.append(Candidate(tid, session_id, idx, speaker, from_epoch_us(ts), float(score), bool(follows), role,
                                   len(text), keyed))
            if tid not in turns:
                turns[tid] = _turn(tid, namespace, session_id, idx, role, speaker, text, ts, external_id, model,
                                   *attachments)
    return [by_key.get(i, []) for i in range(len(keys))], turns


async def summary_sessions(
    store: Store, method: Method, namespace: str, *, vector: list[float] | None, lucene: str, depth: int,
    exact: bool, as_of: datetime | None, alone: bool = False,
) -> list[str]:
    """Sessions in the order their best current summary (session, window or rollup) matches."""
    if method == "fulltext":
        query = scoped(namespace, SUMMARY_FIELDS, lucene, alone)
        if not query:
            return []
        row = await best_hits(store, "retrieval/summaries_fulltext", "hits", 2, depth, query=query,
                              namespace=namespace, as_of=as_of)
    elif exact:
        row = await store.read_row("retrieval/summaries_vector", vector=vector, namespace=namespace,
                                   k=depth, as_of=as_of)
    else:
        row = await store.read_row("retrieval/summaries_vector_index", vector=vector, namespace=namespace,
                                   fetch=min(max(depth * 2, 50), 1000), k=depth, as_of=as_of)
    return list(dict.fromkeys(hit[0] for hit in row.get("hits", [])))


async def sessions_in_window(store: Store, namespace: str, window: TimeWindow, slack_days: float) -> set[str]:
    slack = timedelta(days=slack_days)
    rows = await store.read("retrieval/sessions_in_window", namespace=namespace,
                            start=window.start - slack, end=window.end + slack)
    return {r["session_id"] for r in rows}


class NamespaceSizes:
    """Turn counts per namespace and in the whole database, cached briefly: they decide exact search
    against the index, and how far the index is over-fetched."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: dict[str, tuple[float, int, int]] = {}

    async def counts(self, namespace: str) -> tuple[int, int]:
        """(turns in the namespace, turns in the database)."""
        hit = self._cache.get(namespace)
        if hit and hit[0] > time.monotonic():
            return hit[1], hit[2]
        rows = await self.store.read("retrieval/namespace_size", namespace=namespace)
        size, total = (int(rows[0]["turns"]), int(rows[0]["total"])) if rows else (0, 0)
        self._cache[namespace] = (time.monotonic() + SIZE_TTL_S, size, total)
        return size, total


def filtered(store: Store) -> bool:
    """Whether this server's vector indexes filter by tenant inside the index (Cypher 25 SEARCH, 2026.02
    and later: `Capabilities.path` "cypher25"); else they are global, filtered after the search."""
    return store.capabilities.path == "cypher25"


def index_fetch(store: Store, policy: VectorSearchSettings, depth: int, size: int, total: int) -> int:
    """Index hits to ask for, to keep `depth` of a namespace holding `size` of the index's `total`
    turns: where the index filters by tenant (`Capabilities.path` "cypher25"), `depth` times
    `index_overfetch_turns` (HNSW's candidate list, and so its recall, grows with what it is asked
    for); else enough that about `depth` of the global index's hits are the namespace's (`overfetch`)."""
    if filtered(store):
        return policy.index_fetch("turns", depth)
    return overfetch(depth, size, total)


def overfetch(depth: int, size: int, total: int, floor: int = 0) -> int:
    """How many index hits to ask for so that about `depth` fall in a namespace holding `size` of the
    index's `total` entries (a fifth more for luck), between `floor` and 1000."""
    share = min(1.0, size / total) if size > 0 and total > 0 else 1.0
    return int(min(1000, max(floor, depth, -(-depth * 1.2 // share))))



async def hydrate_turns(store: Store, ids: list[str]) -> dict[str, Turn]:
    if not ids:
        return {}
    row = await store.read_row("retrieval/turns_hydrate", ids=ids)
    return {columns[0]: _turn(*columns) for columns in row.get("turns", [])}


def _turn(tid: str, namespace: str, session_id: str, idx: int, role: Role, speaker: str | None, text: str, ts: int,
          external_id: str | None, model: str | None, kinds: list[str] | None = None,
          captions: list[str] | None = None, urls: list[str] | None = None, trust: Trust | None = None) -> Turn:
    """A turn from the columns the hydrating queries return (`ts` in epoch µs; the attachments as
    the node's parallel lists, `kg.core.models.turns.attachment_columns`; the trust of an untrusted one)."""
    return Turn(id=tid, namespace=namespace, session_id=session_id, idx=idx, role=role, speaker=speaker,
                text=text, ts=from_epoch_us(ts), external_id=external_id, embedding_model=model,
                attachments=attachments_of(kinds, captions, urls), trust=trust or "trusted")


async def hydrate_sessions(store: Store, namespace: str, ids: list[str]) -> dict[str, tuple[Session, Summary | None]]:
    if not ids:
        return {}
    rows = await store.read("retrieval/sessions_hydrate", namespace=namespace, ids=ids)
    return {r["session"]["id"]: (Session.model_validate(native_props(r["session"])),
                                 summary_from_props(r["summary"]) if r["summary"] else None) for r in rows}


def first_seen(order: list[str], pool: dict[str, Candidate]) -> list[tuple[str, float]]:
    """The sessions of `order`'s turns, each scored 1 / the rank of its first turn."""
    seen: dict[str, float] = {}
    for rank, tid in enumerate(order, start=1):
        seen.setdefault(pool[tid].session_id, 1.0 / rank)
    return list(seen.items())
