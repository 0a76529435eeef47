"""Ties are broken by a stable key, never by arrival order: equal scores rank by turn id in the
in-memory cache as in Cypher (`ORDER BY score DESC, t.id`), and fused scores by the item itself."""

from __future__ import annotations

import numpy as np

from kg.queries.fusion import ranking, rrf
from kg.queries.vectors import SCORE_DECIMALS, ranked


def test_equal_scores_rank_by_turn_id_whatever_the_cache_order() -> None:
    scores = np.array([0.5, 0.7, 0.5, 0.7, 0.1])
    ids = ["t-d", "t-c", "t-b", "t-a", "t-e"]
    assert ranked(scores, ids, 3) == [3, 1, 2]  # t-a, t-c (0.7), then t-b: the cut falls inside a tie
    shuffled = [4, 2, 0, 3, 1]
    again = ranked(scores[shuffled], [ids[i] for i in shuffled], 3)
    assert [ids[shuffled[i]] for i in again] == ["t-a", "t-c", "t-b"]
    assert ranked(scores, ids, 0) == [] and len(ranked(scores, ids, 99)) == 5


def test_scores_closer_than_the_rounding_are_ties() -> None:
    base = 0.8123451
    noisy = np.round(np.array([base + 1e-8, base - 1e-8]), SCORE_DECIMALS)  # two processes' last bits
    assert noisy[0] == noisy[1]
    assert ranked(noisy, ["t-b", "t-a"], 1) == [1]


def test_fused_ties_rank_by_item() -> None:
    scores = rrf([["t-b", "t-a"], ["t-a", "t-b"]])
    assert scores["t-a"] == scores["t-b"]
    assert ranking(scores) == ["t-a", "t-b"]
