"""BM25 over one namespace's session summaries, with the namespace's own statistics: stage 1's
summaries' list (`kg.queries.retrieve`) for a namespace the in-memory cache holds
(`kg.queries.vectors`, which forgets a namespace's summaries when it evicts the namespace).

Before each search the namespace's stamp (`retrieval/summary_stamp`) says whether any version was
made, expired or deleted since; only then does the same read list the versions again, and only new
ones' texts are read and analysed. A version this process wrote (`written`, told by the summaries'
writer after its commit) is analysed then, for a namespace held here, so the first search after
closing a session reads no text.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from kg.core.store.store import Store

from . import keywords
from .fusion import ranked

Terms = tuple[keywords.Postings, keywords.Postings]  # a version's text, then its keywords


def _terms(text: str | None, words: str | None) -> Terms:
    """A version's BM25 terms: its text's and its keywords' (the two fields of the summary index)."""
    return keywords.postings([text]), keywords.postings([words])


class SummaryTerms:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._locks: dict[str, asyncio.Lock] = {}
        self._held: dict[str, _Summaries] = {}
        self._fresh: dict[str, dict[str, Terms]] = {}  # versions written here, not listed yet

    def forget(self, namespace: str) -> None:
        self._held.pop(namespace, None)
        self._fresh.pop(namespace, None)

    def written(self, namespace: str, rows: list[tuple[str, str | None, str | None]]) -> None:
        """New versions of a namespace held here, as stored ([id, text, keywords] each): their terms,
        taken by the next search that lists them (one of a namespace not held is read by then)."""
        if namespace in self._held:
            self._fresh.setdefault(namespace, {}).update({i: _terms(text, words) for i, text, words in rows})

    async def search(self, namespace: str, query: str, depth: int, as_of: datetime | None) -> list[str]:
        """Sessions in the order their best current summary matches `query` by BM25 over its text and
        keywords (each field with the namespace's own statistics, the scores added, as Lucene adds its
        clauses); only summaries started by `as_of`."""
        held = await self._current(namespace)
        scores = keywords.scores(held.text, query) + keywords.scores(held.topics, query)
        scores = np.where((scores > 0) & held.current, scores, -np.inf)
        if as_of is not None:
            scores = np.where(held.started <= as_of.timestamp(), scores, -np.inf)
        order = [i for i in ranked(scores, held.ids, depth) if np.isfinite(scores[i])]
        return list(dict.fromkeys(held.sessions[i] for i in order))

    async def _current(self, namespace: str) -> _Summaries:
        """The namespace's summary versions: which are current, and the terms of each (read once per id)."""
        async with self._locks.setdefault(namespace, asyncio.Lock()):
            kept = self._held.get(namespace)
            read = await self.store.read_row("retrieval/summary_stamp", namespace=namespace,
                                             known=kept.stamp if kept is not None else None)
            stamp, listed_rows = read.get("stamp"), read.get("rows")
            if kept is not None and listed_rows is None:  # the stamp it holds: no version made, expired or deleted
                return kept
            rows = sorted(listed_rows or [], key=lambda r: r[0])
            held = self._held.get(namespace) or _Summaries.empty()
            listed = {r[0] for r in rows}
            fresh = self._fresh.pop(namespace, {})
            if unlisted := {i: t for i, t in fresh.items() if i not in listed}:  # committed after the listing
                self._fresh[namespace] = unlisted
            terms = {i: t for i, t in {**held.terms, **fresh}.items() if i in listed}
            missing = [r[0] for r in rows if r[0] not in terms]
            if missing:  # a version's text is read and analysed once; then its terms join the others'
                texts = await self.store.read_row("retrieval/summary_texts", namespace=namespace, ids=missing)
                terms.update({i: _terms(text, words) for i, text, words in texts.get("rows", [])})
                rows = [r for r in rows if r[0] in terms]  # one deleted in between is left out
            ids = [r[0] for r in rows]
            same = ids == held.ids  # the same versions: their postings stand (sessions may have merged)
            held = _Summaries(
                terms, ids, [r[1] for r in rows], np.array([bool(r[2]) for r in rows], dtype=bool),
                np.array([np.inf if r[3] is None else r[3] / 1e6 for r in rows], dtype=np.float64),
                held.text if same else keywords.joined([(terms[i][0], row) for row, i in enumerate(ids)], len(ids)),
                held.topics if same else keywords.joined([(terms[i][1], row) for row, i in enumerate(ids)], len(ids)),
                stamp)
            self._held[namespace] = held
            return held


@dataclass
class _Summaries:
    """A namespace's summary versions in id order, with each field's postings (`terms`: each version's
    own, one row per field, by id)."""

    terms: dict[str, Terms]
    ids: list[str]
    sessions: list[str]
    current: np.ndarray
    started: np.ndarray  # epoch seconds
    text: keywords.Postings
    topics: keywords.Postings  # the `keywords` field: topics and entities
    stamp: list[Any] | None = None  # retrieval/summary_stamp, read with the versions

    @classmethod
    def empty(cls) -> _Summaries:
        nothing = keywords.joined([], 0)
        return cls({}, [], [], np.zeros(0, dtype=bool), np.zeros(0), nothing, nothing)
