"""How much to trust a fact at a moment: pure scoring, no database.

    score = base(source) x min(1 + step * reinforcements, cap) x staleness(age) x (0 if ended)

The age runs from the fact's last touch (recorded, reinforced or read, whichever is latest) to the
moment asked about: `as_of`, or now. Touches after that moment had not happened yet then, so they
are ignored; with none left the fact is taken as fresh. Only the latest read and reinforcement are
stored, so a question about the past sees at most those, not every earlier touch.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from kg.core.settings.memory import ConfidenceSettings

_DAY = timedelta(days=1)


def staleness(age_days: float, cfg: ConfidenceSettings) -> float:
    """1.0 while fresh, then linear down to the floor at `stale_days`, the floor after that."""
    if age_days <= cfg.fresh_days:
        return 1.0
    if age_days >= cfg.stale_days:
        return cfg.staleness_floor
    drop = (age_days - cfg.fresh_days) / (cfg.stale_days - cfg.fresh_days)
    return 1.0 - (1.0 - cfg.staleness_floor) * drop


def reinforcement_boost(count: int, cfg: ConfidenceSettings) -> float:
    return min(1.0 + cfg.reinforcement_step * max(count, 0), cfg.reinforcement_cap)


def last_touch(at: datetime, *stamps: datetime | None) -> datetime | None:
    """The latest of `stamps` at or before `at`."""
    return max((s for s in stamps if s is not None and s <= at), default=None)


def score(
    *,
    source: str,
    reinforcement_count: int,
    recorded_at: datetime,
    last_reinforced_at: datetime | None,
    last_accessed_at: datetime | None,
    ended: bool,
    at: datetime,
    cfg: ConfidenceSettings,
) -> float:
    """The confidence of one fact at `at`; `ended` when superseded or retracted by then."""
    if ended:
        return 0.0
    try:
        base = cfg.base[source]
    except KeyError:
        raise ValueError(f"no base confidence for source {source!r}; configure [memory.confidence.base]") from None
    touched = last_touch(at, recorded_at, last_reinforced_at, last_accessed_at)
    age_days = 0.0 if touched is None else (at - touched) / _DAY
    return base * reinforcement_boost(reinforcement_count, cfg) * staleness(age_days, cfg)
