"""Automatic sessions from timestamps alone (kg.ingest.sessions), without a database."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from kg.ingest.sessions import runs


def test_runs_join_spans_within_the_gap_and_name_them_by_their_start() -> None:
    t = datetime(2025, 6, 1, 9, 0, tzinfo=timezone.utc)
    gap = timedelta(minutes=30)
    stored = [("s-a", t + timedelta(minutes=40), t + timedelta(minutes=60)),
              ("s-b", t + timedelta(minutes=200), t + timedelta(minutes=210))]
    found = runs(stored, [t + timedelta(minutes=15), t + timedelta(minutes=500)], gap)
    assert [(r.target, r.stored) for r in found] == [("s-20250601T091500Z", ["s-a"]), ("s-20250601T172000Z", [])]
    assert runs(stored, [], gap) == []  # only runs that hold a new message
