"""`bench.tenants`' own arithmetic: the long-tailed sizes it builds and the tie-aware recall it reports."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

from bench import tenants
from kg.queries.candidates import Candidate


def test_sizes_are_long_tailed_whole_sessions_adding_up_to_the_turns_asked() -> None:
    sizes = tenants.tenant_sizes(1_000_000, 1_000, seed=11)
    assert len(sizes) == 1_000 and abs(sum(sizes) - 1_000_000) < 1_000
    assert all(s % 20 == 0 for s in sizes) and max(sizes) <= 50_000
    buckets = Counter(tenants.bucket_of(s) for s in sizes)
    assert buckets["under_500"] > 500 and buckets["10k_50k"] >= 10  # most small, some of 10k-50k
    assert tenants.tenant_sizes(1_000_000, 1_000, seed=11) == sizes  # the same database every run


def _c(score: float, i: int = 0) -> Candidate:
    return Candidate(f"t{i}", "s", i, None, datetime(2025, 1, 1, tzinfo=timezone.utc), score, False, "user", 40, False)


def test_recall_counts_ties_with_the_exact_lists_last_place() -> None:
    exact = [_c(0.9, 1), _c(0.8, 2), _c(0.8, 3)]
    assert tenants.filled([_c(0.9, 1), _c(0.8, 7), _c(0.8, 8)], exact) == 1.0  # other turns of the same score
    assert tenants.filled([_c(0.9, 1), _c(0.8, 2), _c(0.7, 9)], exact) == 2 / 3
    assert tenants.filled([_c(0.9, 1)], exact) == 1 / 3  # the index gave fewer than asked
    assert tenants.filled([], []) == 1.0
