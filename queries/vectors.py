"""Small namespaces' turns held in memory: their vectors, for exact dense search without a store
scan, and their keys' terms, for BM25 with the namespace's own statistics (`kg.queries.keywords`)
over turns, and over each session's whole text (its turns' own keys summed: stage 1's list).

Neo4j stays the source of truth. Every write of a turn vector (a new turn, a context key, a
re-embed) bumps its session's `vectors_rev` in the same transaction, so before each search the
cache reads the namespace's stamp (`retrieval/vector_stamp`: its sessions' count, revisions, latest
change and turns, in one row) and, only when that moved from the stamp it holds, its session
revisions in the same read, then reloads only the sessions whose revision changed, dropping those
that are gone. The revisions are read before the rows, so a write landing in between is seen as a
change next time, never hidden. Namespaces are evicted least recently used once the cache holds
more than `max_turns` turns. The cache holds the turns
that have a vector; while a session has a turn without one (written while the embedder was down),
the namespace's keyword lists are left to the fulltext indexes.

A cache made with `vectors=False` holds the rows and postings alone (`retrieval/term_rows`), for
namespaces too large for exact dense search whose BM25 should still read their own statistics; it
refreshes by the same revisions.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Awaitable

import numpy as np

from kg.core.models.turns import Role
from kg.core.store.store import Store

from . import keywords
from .candidates import Candidate, from_epoch_us
from .fusion import ranked
from .recipes import Key
from .summary_terms import SummaryTerms

Revision = tuple[int, Any]
# id, session, idx, speaker, ts, follows_question, role, characters of its text, has a context key
Row = tuple[str, str, int, str | None, datetime, bool, Role, int, bool]


@dataclass
class _Block:
    """One session's turns: metadata and unit-length vectors (own key's first part, context key),
    the later parts of long keys with the row each belongs to, each key's terms, and each turn's
    packed token vectors (late interaction; None where it has none)."""

    revision: Revision
    rows: list[Row]
    turn: np.ndarray
    context: np.ndarray
    passages: np.ndarray
    owners: np.ndarray  # the row (in this block) of each passage
    terms: dict[Key, keywords.Postings]
    late: list[bytes | None]
    _whole: keywords.Postings | None = None
    _times: np.ndarray | None = None  # each turn's time, epoch seconds

    def times(self) -> np.ndarray:
        """Each turn's time in epoch seconds, listed on first use (a turn's time never changes)."""
        if self._times is None:
            self._times = np.array([r[4].timestamp() for r in self.rows], dtype=np.float64)
        return self._times

    def whole(self, until: float | None) -> keywords.Postings:
        """The session as one document of its turns' own keys, those at or before `until` (epoch
        seconds; None: all); the whole of it made once, a part only for a session `until` cuts."""
        one = np.zeros(len(self.rows), dtype=np.int64)
        if until is not None and len(self.rows) and self.times().max() > until:  # only turns by then count
            return keywords.summed(self.terms["turn"], one, 1, self.times() <= until)
        if self._whole is None:
            self._whole = keywords.summed(self.terms["turn"], one, 1)
        return self._whole


@dataclass
class HeldNamespace:
    blocks: dict[str, _Block]
    rows: list[Row]
    ts: np.ndarray  # epoch seconds, for as_of
    matrices: dict[Key, np.ndarray]
    passages: np.ndarray
    owners: np.ndarray  # the row (in the namespace) of each passage
    late: list[bytes | None]  # each row's packed token vectors (kg.core.embedders.late), or None
    late_bytes: int = 0  # their size, in all
    complete: bool = True  # every turn of every session is held (each has a vector)
    stamp: list[Any] | None = None  # retrieval/vector_stamp as it was when this was last checked; None: unknown
    _at: dict[str, int] | None = None
    _ids: list[str] | None = None
    _terms: dict[Key, keywords.Postings] | None = None
    _sessions: keywords.Postings | None = None  # sessions_text() of every turn

    @property
    def size(self) -> int:
        return len(self.rows)

    def terms(self, key: Key) -> keywords.Postings:
        """The namespace's postings on `key`, joined on first use."""
        if self._terms is None:
            ordered = [self.blocks[s] for s in sorted(self.blocks)]
            starts = np.cumsum([0] + [len(b.rows) for b in ordered])[:-1]
            keys: tuple[Key, ...] = ("turn", "context")
            self._terms = {k: keywords.joined([(b.terms[k], int(at)) for b, at in zip(ordered, starts)], self.size)
                           for k in keys}
        return self._terms[key]

    def sessions_text(self, until: float | None = None) -> tuple[list[str], keywords.Postings]:
        """The session ids in order, and each session as one document of its turns' own keys (those
        at or before `until`, epoch seconds); each session's made once, all of them joined once."""
        ids = sorted(self.blocks)
        if until is None and self._sessions is not None:
            return ids, self._sessions
        joined = keywords.joined([(self.blocks[s].whole(until), i) for i, s in enumerate(ids)], len(ids))
        if until is None:
            self._sessions = joined
        return ids, joined

    def ids(self) -> list[str]:
        """Each row's turn id, listed on first use."""
        if self._ids is None:
            self._ids = [r[0] for r in self.rows]
        return self._ids

    def positions(self) -> dict[str, int]:
        """Each turn id's row, built on first use."""
        if self._at is None:
            self._at = {r[0]: i for i, r in enumerate(self.rows)}
        return self._at


SCORE_DECIMALS = 6  # the dense lists' rounding, in Cypher too (`round(..., 6)`): closer scores are ties


def unit_rows(rows: list[list[float]] | np.ndarray) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


def _join(blocks: dict[str, _Block], complete: bool) -> HeldNamespace:
    ordered = [blocks[s] for s in sorted(blocks)]
    rows = [r for b in ordered for r in b.rows]
    matrices: dict[Key, np.ndarray] = {}
    for key in ("turn", "context"):
        parts = [getattr(b, key) for b in ordered if len(b.rows)]
        matrices[key] = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    ts = np.concatenate([b.times() for b in ordered]) if ordered else np.zeros(0, dtype=np.float64)
    starts = np.cumsum([0] + [len(b.rows) for b in ordered])[:-1]
    long = [(b, start) for b, start in zip(ordered, starts) if len(b.owners)]
    passages = np.concatenate([b.passages for b, _ in long]) if long else np.zeros((0, 0), dtype=np.float32)
    owners = np.concatenate([b.owners + start for b, start in long]) if long else np.zeros(0, dtype=np.int64)
    late = [t for b in ordered for t in b.late]
    return HeldNamespace(blocks, rows, ts, matrices, passages, owners, late, sum(len(t) for t in late if t), complete)


class NamespaceVectors:
    def __init__(self, store: Store, max_turns: int, vectors: bool = True, late_bytes: int = 512 << 20) -> None:
        self.store = store
        self.max_turns = max_turns
        self.max_late_bytes = late_bytes  # the token vectors held (late interaction), in all
        self._rows = "retrieval/vector_rows" if vectors else "retrieval/term_rows"
        self._spaces: OrderedDict[str, HeldNamespace] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self.summaries = SummaryTerms(store)  # BM25 over summaries, forgotten with the namespace

    def namespaces(self) -> list[str]:
        """The namespaces held, least recently searched first."""
        return list(self._spaces)

    async def search(self, namespace: str, key: Key, vector: list[float], depth: int, as_of: datetime | None,
                     held: Awaitable[HeldNamespace] | None = None) -> list[Candidate]:
        """The `depth` turns nearest `vector` on `key` (a turn without a context key: its own text); on
        the turn's own key, a long turn scores its best part."""
        space = await (held or self.current(namespace))
        if not space.size:
            return []
        query = unit_rows([vector])[0]
        cosines = (space.matrices[key] @ query).astype(np.float64)
        if key == "turn" and len(space.owners):
            np.maximum.at(cosines, space.owners, (space.passages @ query).astype(np.float64))
        # Neo4j's vector.similarity.cosine scale and rounding, so both paths rank alike (`ranked`)
        scores = np.round((1.0 + cosines) / 2, SCORE_DECIMALS)
        if as_of is not None:
            scores = np.where(space.ts <= as_of.timestamp(), scores, -np.inf)
        return _best(space, scores, depth)

    async def keyword_search(self, namespace: str, key: Key, query: str, depth: int, as_of: datetime | None,
                             held: Awaitable[HeldNamespace] | None = None) -> list[Candidate] | None:
        """The `depth` best turns by BM25 on `key` with the namespace's own statistics, as the
        fulltext list ranks them (score, then id; turns that match no term are left out); None
        while the cache does not hold every turn of the namespace."""
        space = await (held or self.current(namespace))
        if not space.complete:
            return None
        scores = keywords.scores(space.terms(key), query)
        scores = np.where(scores > 0, scores, -np.inf)
        if as_of is not None:
            scores = np.where(space.ts <= as_of.timestamp(), scores, -np.inf)
        return _best(space, scores, depth)

    async def session_keyword_search(self, namespace: str, query: str, depth: int, as_of: datetime | None,
                                     held: Awaitable[HeldNamespace] | None = None) -> list[str] | None:
        """The `depth` sessions best matching `query` by BM25 over their whole text (turns to `as_of`),
        with the namespace's own statistics, then by id; None while the cache lacks a turn."""
        space = await (held or self.current(namespace))
        if not space.complete:
            return None
        ids, index = space.sessions_text(as_of.timestamp() if as_of is not None else None)
        scores = keywords.scores(index, query)
        scores = np.where(scores > 0, scores, -np.inf)
        return [ids[i] for i in ranked(scores, ids, depth) if np.isfinite(scores[i])]

    def _holding(self, namespace: str, ids: list[str]) -> tuple[HeldNamespace, dict[str, int]] | None:
        """The namespace as the last search left it, and its rows by turn id, if it holds every one of `ids`."""
        space = self._spaces.get(namespace)
        at = space.positions() if space is not None else {}
        return (space, at) if space is not None and all(i in at for i in ids) else None

    def turn_vectors(self, namespace: str, ids: list[str]) -> dict[str, list[Any]] | None:
        """Rows as `retrieval/turn_vectors` gives them ([id, role, own vector, later parts
        flattened or None], unit length) for `ids`, from the namespace as the last search left it; None
        unless it holds every one of them (the caller then reads the store)."""
        if (held := self._holding(namespace, ids)) is None:
            return None
        space, at = held
        out = {}
        for i in ids:
            row = at[i]
            parts = space.passages[space.owners == row] if len(space.owners) else space.passages[:0]
            out[i] = [i, space.rows[row][6], space.matrices["turn"][row].tolist(),
                      parts.ravel().tolist() if len(parts) else None]
        return out

    def late_tokens(self, namespace: str, ids: list[str]) -> dict[str, bytes] | None:
        """The packed token vectors of `ids` that have them, from the namespace as the last search left
        it; None unless it holds every one of the turns (the caller then reads the store)."""
        if (held := self._holding(namespace, ids)) is None:
            return None
        space, at = held
        return {i: tokens for i in ids if (tokens := space.late[at[i]])}

    def held(self, namespace: str) -> HeldNamespace | None:
        """The namespace as the last search left it (nothing is read), or None."""
        return self._spaces.get(namespace)

    async def current(self, namespace: str) -> HeldNamespace:
        """The namespace as the store holds it now (sessions whose revision moved are reloaded): one
        search's lists can share it, `held`, instead of each reading the revisions again."""
        lock = self._locks.setdefault(namespace, asyncio.Lock())
        async with lock:  # one refresh per namespace at a time; searches of a fresh one wait briefly
            held = self._spaces.get(namespace)
            row = await self.store.read_row("retrieval/vector_stamp", namespace=namespace,
                                            known=held.stamp if held is not None else None)
            stamp, sessions = row.get("stamp"), row.get("sessions")
            if held is not None and sessions is None:  # the stamp it holds: nothing moved
                self._spaces.move_to_end(namespace)
                return held
            revisions = {s: (int(rev), changed) for s, rev, changed, _ in sessions or []}
            counts = {s: int(n or 0) for s, _, _, n in sessions or []}
            space = self._spaces.get(namespace)
            blocks = dict(space.blocks) if space else {}
            stale = [s for s, rev in revisions.items() if s not in blocks or blocks[s].revision != rev]
            gone = [s for s in blocks if s not in revisions]
            for s in gone:
                del blocks[s]
            if stale:
                loaded = await self.store.read_row(self._rows, namespace=namespace, sessions=stale)
                blocks.update(_blocks(loaded.get("rows", []), {s: revisions[s] for s in stale}))
            complete = all(len(b.rows) >= counts.get(s, 0) for s, b in blocks.items())
            if space is not None and not stale and not gone and space.complete == complete:
                self._spaces.move_to_end(namespace)
            else:
                self._keep(namespace, blocks, complete)
            # read with the revisions, before the rows: a write landing in between moves it again, seen next time
            self._spaces[namespace].stamp = stamp
            return self._spaces[namespace]

    # -- what writes in this process committed (kg.ingest.turns.VectorSink) --------------------------
    def turns_written(self, namespace: str, session_id: str, revision: Revision, rows: list[list[Any]],
                      new: bool) -> None:
        """Turns appended to a session whose vector revision their write moved to `revision`: taken
        when this cache holds the session as it was just before (or it was new), so the next search
        reloads nothing; otherwise left to that search, which sees the revision differ."""
        space = self._spaces.get(namespace)
        blocks = dict(space.blocks) if space else {}
        held = blocks.get(session_id)
        if held is not None and held.revision[0] == revision[0] - 1:
            blocks[session_id] = _extended(held, _blocks(rows, {session_id: revision})[session_id], revision)
        elif held is None and new:
            blocks[session_id] = _blocks(rows, {session_id: revision})[session_id]
        else:
            return
        self._keep(namespace, blocks, space.complete if space else True)

    def contexts_written(self, namespace: str, session_id: str, revision: Revision,
                         keys: dict[str, tuple[list[float] | None, bool, str]]) -> None:
        """New context keys of a session's turns (a session closed): their vectors, whether the turn
        before each asked a question, and their texts; taken as `turns_written` is."""
        space = self._spaces.get(namespace)
        held = space.blocks.get(session_id) if space else None
        if space is None or held is None or held.revision[0] != revision[0] - 1:
            return
        context = held.context.copy()
        rows = list(held.rows)
        texts: dict[int, str | None] = {}
        for i, row in enumerate(held.rows):
            if row[0] in keys:
                vector, follows, text = keys[row[0]]
                if vector is not None:
                    context[i] = unit_rows([vector])[0]
                rows[i] = (*row[:5], follows, row[6], row[7], text is not None)
                texts[i] = text
        terms = {**held.terms, "context": keywords.replaced(held.terms["context"], texts)}
        # the rest stands, the turns' own words with it: the session's whole text is not made again
        block = replace(held, revision=revision, rows=rows, context=context, terms=terms)
        self._keep(namespace, {**space.blocks, session_id: block}, space.complete)

    def summaries_written(self, namespace: str, rows: list[tuple[str, str | None, str | None]]) -> None:
        """New summary versions (a session summarized): their BM25 terms, analysed now."""
        self.summaries.written(namespace, rows)

    def _keep(self, namespace: str, blocks: dict[str, _Block], complete: bool) -> None:
        self._spaces[namespace] = _join(blocks, complete)
        self._spaces.move_to_end(namespace)
        self._evict()

    def _evict(self) -> None:
        while len(self._spaces) > 1 and (sum(s.size for s in self._spaces.values()) > self.max_turns
                                         or sum(s.late_bytes for s in self._spaces.values()) > self.max_late_bytes):
            gone, _ = self._spaces.popitem(last=False)
            self.summaries.forget(gone)


def _best(space: HeldNamespace, scores: np.ndarray, depth: int) -> list[Candidate]:
    """The `depth` best rows by score (then id), as candidates; rows scored -inf are left out."""
    out = []
    for i in ranked(scores, space.ids(), depth):
        if not np.isfinite(scores[i]):
            break
        tid, session_id, idx, speaker, ts, follows, role, chars, keyed = space.rows[i]
        out.append(Candidate(tid, session_id, idx, speaker, ts, float(scores[i]), follows, role, chars, keyed))
    return out


def _extended(held: _Block, more: _Block, revision: Revision) -> _Block:
    """`held` with the turns of `more` after its own."""
    if not len(held.rows):
        return more
    return _Block(revision, held.rows + more.rows, np.concatenate([held.turn, more.turn]),
                  np.concatenate([held.context, more.context]),
                  np.concatenate([held.passages, more.passages]) if len(more.owners) else held.passages,
                  np.concatenate([held.owners, more.owners + len(held.rows)]) if len(more.owners) else held.owners,
                  {k: keywords.appended(held.terms[k], more.terms[k]) for k in held.terms}, held.late + more.late)


def _blocks(rows: list[list[Any]], revisions: dict[str, Revision]) -> dict[str, _Block]:
    """Rows of [id, session, idx, speaker, ts µs, follows_question, embedding, context_embedding,
    passage_embeddings (flattened, or null), role, key_text, context_text, characters of its text,
    late_tokens (or null)]."""
    by_session: dict[str, list[list[Any]]] = {s: [] for s in revisions}
    for r in rows:
        by_session[r[1]].append(r)
    out = {}
    for s, members in by_session.items():
        members.sort(key=lambda r: r[2])
        meta = [(r[0], s, r[2], r[3], from_epoch_us(r[4]), bool(r[5]), r[9], r[12], r[11] is not None)
                for r in members]
        if not members or members[0][6] is None:  # no rows, or terms only (retrieval/term_rows)
            none = np.zeros((len(members), 0), dtype=np.float32)
            terms = _terms(members)
            out[s] = _Block(revisions[s], meta, none, none, none, np.zeros(0, dtype=np.int64), terms,
                            [None] * len(members))
            continue
        turn = unit_rows([r[6] for r in members])
        context = unit_rows([r[7] if r[7] is not None else r[6] for r in members])
        dim = turn.shape[1] if members else 0
        parts = [(i, np.asarray(r[8], dtype=np.float32).reshape(-1, dim)) for i, r in enumerate(members) if r[8]]
        passages = unit_rows(np.concatenate([p for _, p in parts])) if parts else np.zeros((0, dim), np.float32)
        owners = np.concatenate([np.full(len(p), i) for i, p in parts]) if parts else np.zeros(0, dtype=np.int64)
        late = [bytes(r[13]) if len(r) > 13 and r[13] else None for r in members]
        out[s] = _Block(revisions[s], meta, turn, context, passages, owners, _terms(members), late)
    return out


def _terms(members: list[list[Any]]) -> dict[Key, keywords.Postings]:
    return {"turn": keywords.postings([r[10] for r in members]), "context": keywords.postings([r[11] for r in members])}
