"""Rank fusion and score arithmetic over plain data and arrays (pure, tested without a database)."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)


def rrf(lists: Sequence[Sequence[K]], k: int = 60, weights: Sequence[float] | None = None) -> dict[K, float]:
    """Reciprocal rank fusion: each list gives its item at rank r (from 1) weight / (k + r)."""
    if weights is not None and len(weights) != len(lists):
        raise ValueError("one weight per list")
    scores: dict[K, float] = defaultdict(float)
    for i, ranked in enumerate(lists):
        w = 1.0 if weights is None else weights[i]
        if w == 0:
            continue
        for rank, item in enumerate(ranked, start=1):
            scores[item] += w / (k + rank)
    return dict(scores)


def ranking(scores: Mapping[K, float]) -> list[K]:
    """Items by descending score; ties keep a stable order by the item itself."""
    return sorted(scores, key=lambda item: (-scores[item], str(item)))


def ranked(scores: np.ndarray, ids: list[str], n: int) -> list[int]:
    """Positions of the `n` best finite scores, ties broken by id (a turn's, a summary's, a
    session's), as the Cypher lists do (`ORDER BY score DESC, t.id`): every process ranks alike,
    whatever the order in its cache. The cut is taken at the n-th score, so a tie across it is
    settled by id too (of the tied rows only: thousands may share a score). Rows scored -inf are
    left out."""
    n = min(n, len(scores))
    if n <= 0:
        return []
    cut = np.partition(scores, len(scores) - n)[len(scores) - n]
    if not np.isfinite(cut):  # fewer than n finite scores: all of them
        chosen = np.flatnonzero(np.isfinite(scores)).tolist()
    else:
        chosen = np.flatnonzero(scores > cut).tolist()
        chosen += heapq.nsmallest(n - len(chosen), np.flatnonzero(scores == cut).tolist(), key=ids.__getitem__)
    return sorted(chosen, key=lambda i: (-scores[i], ids[i]))


def group_scores(scores: Mapping[K, float], group_of: Mapping[K, str], top: int, decay: float = 0.5) -> dict[str, float]:
    """A group's score from its members': the best, plus `decay`-weighted next ones (`top` in all),
    so a session with several good turns outranks one with a single lucky match."""
    members: dict[str, list[float]] = defaultdict(list)
    for item, score in scores.items():
        members[group_of[item]].append(score)
    return {g: sum(s * decay**i for i, s in enumerate(sorted(v, reverse=True)[:top])) for g, v in members.items()}


def best_per_group(scores: Mapping[K, float], group_of: Mapping[K, str], group_order: Sequence[str], per_group: int
                   ) -> list[K]:
    """Items of the groups in `group_order` only, at most `per_group` each, by score."""
    allowed = set(group_order)
    taken: dict[str, int] = defaultdict(int)
    out: list[K] = []
    for item in ranking(scores):
        g = group_of[item]
        if g in allowed and taken[g] < per_group:
            taken[g] += 1
            out.append(item)
    return out


def normalized(scores: Mapping[K, float]) -> dict[K, float]:
    """Scores scaled to 0..1 by the best one (an empty or all-zero mapping stays as it is)."""
    top = max(scores.values(), default=0.0)
    return {k: (v / top if top > 0 else 0.0) for k, v in scores.items()}


def later_first(order: Sequence[K], restates: Callable[[K, K], bool]) -> list[K]:
    """`order` with every item moved just before the first earlier item it restates
    (`restates(later, earlier)`), so a later statement of a topic ranks at least as high as the
    earlier ones; items `restates` does not pair keep their order. `restates` must be acyclic (a
    strict order in time), which ends the loop: each move puts a later item at the position."""
    out = list(order)
    i = 0
    while i < len(out):
        newer = next((j for j in range(i + 1, len(out)) if restates(out[j], out[i])), None)
        if newer is None:
            i += 1
        else:
            out.insert(i, out.pop(newer))
    return out
