"""How much a correction weighs at a moment, and which status it has earned: pure, no database.

    weight = confidence x reinforcement_count^growth x 0.5^(days since last seen / half_life_days)

`0.5^(d/h)` is `exp(-d * ln 2 / h)`: `half_life_days` is a true half-life. The status is the
lower of two levels: the one the evidence has earned (sessions, span, confirmation) and the one
the weight can still hold (decay demotes what stops recurring, one floor at a time). Both the
write path (graduation on ingest and in the nightly job) and the read path (`core_rules`) use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from kg.core.models.corrections import STATUSES, CorrectionStatus
from kg.core.settings.memory import CorrectionSettings

_DAY = timedelta(days=1)


@dataclass(frozen=True)
class CorrectionState:
    """What graduation and decay look at."""

    confidence: float
    reinforcement_count: int  # distinct sessions that stated it
    first_seen_at: datetime
    last_seen_at: datetime
    half_life_days: float
    confirmed: bool = False


def effective_weight(
    confidence: float, reinforcement_count: int, days_since_last_seen: float, half_life_days: float, growth: float
) -> float:
    if half_life_days <= 0:
        raise ValueError("half_life_days must be positive")
    decay = 0.5 ** (max(days_since_last_seen, 0.0) / half_life_days)
    return confidence * max(reinforcement_count, 1) ** growth * decay


def weight_at(state: CorrectionState, at: datetime, cfg: CorrectionSettings) -> float:
    days = (at - state.last_seen_at) / _DAY
    return effective_weight(state.confidence, state.reinforcement_count, days, state.half_life_days, cfg.growth)


def earned_status(state: CorrectionState, cfg: CorrectionSettings) -> CorrectionStatus:
    """The highest level the evidence supports, regardless of time."""
    sessions = state.reinforcement_count
    if state.confirmed or sessions >= cfg.rule_min_reinforcements:
        return "rule"
    span_days = (state.last_seen_at - state.first_seen_at) / _DAY
    if sessions >= cfg.preference_min_sessions and span_days >= cfg.preference_min_span_days:
        return "preference"
    if sessions >= cfg.pattern_min_sessions:
        return "pattern"
    return "correction"


def held_status(weight: float, cfg: CorrectionSettings) -> CorrectionStatus:
    """The highest level a weight can hold."""
    if weight >= cfg.rule_min_weight:
        return "rule"
    if weight >= cfg.preference_min_weight:
        return "preference"
    if weight >= cfg.pattern_min_weight:
        return "pattern"
    return "correction"


def status_at(state: CorrectionState, at: datetime, cfg: CorrectionSettings) -> CorrectionStatus:
    earned, held = earned_status(state, cfg), held_status(weight_at(state, at, cfg), cfg)
    return min(earned, held, key=STATUSES.index)


def half_life_for(correction_type: str, cfg: CorrectionSettings) -> float:
    return cfg.half_life_days.get(correction_type, cfg.default_half_life_days)


def confidence_for(correction_type: str, cfg: CorrectionSettings) -> float:
    return cfg.confidence.get(correction_type, cfg.default_confidence)
