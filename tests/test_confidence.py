"""Fact confidence as a pure function: base by source, reinforcement cap, staleness, ended facts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from kg.core.settings.memory import ConfidenceSettings
from kg.core.settings.tree import Settings
from kg.queries.confidence import last_touch, reinforcement_boost, score, staleness

CFG = ConfidenceSettings()
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def days(n: float) -> datetime:
    return T0 + timedelta(days=n)


def fact_score(**changes: object) -> float:
    fields: dict[str, object] = dict(source="stated", reinforcement_count=0, recorded_at=T0,
                                     last_reinforced_at=None, last_accessed_at=None, ended=False, at=days(1),
                                     cfg=CFG)
    return score(**{**fields, **changes})  # type: ignore[arg-type]


def test_base_by_source() -> None:
    got = {s: fact_score(source=s) for s in ("stated", "system", "observed", "inferred")}
    assert got == {"stated": 1.0, "system": 0.9, "observed": 0.7, "inferred": 0.5}
    with pytest.raises(ValueError, match="memory.confidence"):
        fact_score(source="rumour")


def test_reinforcement_boost_is_capped() -> None:
    assert [reinforcement_boost(n, CFG) for n in (0, 1, 3)] == pytest.approx([1.0, 1.1, 1.3])
    assert reinforcement_boost(5, CFG) == pytest.approx(1.5) and reinforcement_boost(50, CFG) == 1.5
    assert fact_score(source="observed", reinforcement_count=2) == pytest.approx(0.7 * 1.2)


def test_staleness_is_flat_then_linear_then_floored() -> None:
    assert staleness(0, CFG) == staleness(30, CFG) == 1.0
    assert staleness(197.5, CFG) == pytest.approx(0.75)  # halfway from 30 to 365 days
    assert staleness(365, CFG) == staleness(5000, CFG) == 0.5


def test_age_runs_from_the_latest_touch_before_the_moment_asked_about() -> None:
    assert fact_score(at=days(400)) == pytest.approx(0.5)
    assert fact_score(at=days(400), last_reinforced_at=days(390)) == pytest.approx(1.0)
    assert fact_score(at=days(400), last_accessed_at=days(380)) == pytest.approx(1.0)
    # A read after the moment asked about had not happened then; nothing before it: fresh.
    assert fact_score(at=days(400), last_accessed_at=days(900)) == pytest.approx(0.5)
    assert fact_score(at=days(-10)) == 1.0
    assert last_touch(days(5), days(1), None, days(6)) == days(1)


def test_ended_facts_score_zero() -> None:
    assert fact_score(ended=True, reinforcement_count=9) == 0.0


def test_settings_are_configurable_and_checked() -> None:
    cfg = Settings(memory={"confidence": {"base": {"stated": 0.8, "inferred": 0.3}, "reinforcement_cap": 1.2,
                                          "staleness_floor": 0.2}}).memory.confidence
    assert fact_score(cfg=cfg, reinforcement_count=9) == pytest.approx(0.8 * 1.2)
    assert fact_score(cfg=cfg, at=days(1000)) == pytest.approx(0.8 * 0.2)
    with pytest.raises(ValidationError, match="stale_days"):
        ConfidenceSettings(fresh_days=400, stale_days=365)
