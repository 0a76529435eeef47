"""Point-in-time facts: what held at valid time `as_of`, as believed at transaction time `known_at`.

The belief filter (`recorded_at <= known_at < expired_at`) and the validity filter
(`valid_from <= as_of < valid_to`) run in Cypher (`facts/at`, `facts/history`); this module turns
rows into `FactView`s with a status and a confidence score (`kg.queries.confidence`).

A view in the past is exact: reinforcements are events (`FactEvent`s) and reads are kept as read
events on the fact, so with `known_at` a fact shows the reinforcement count, last reinforcement
and last read it had then, and its confidence is scored at that moment, not with today's counts.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Mapping

from kg.core.models.facts import FactStatus, FactView, entity_key, predicate_key
from kg.core.models.requests import FactHistoryQuery, FactQuery
from kg.core.models.turns import as_utc
from kg.core.models.values import native_props
from kg.core.settings.memory import ConfidenceSettings
from kg.core.store.store import Store

from .confidence import score


def _status(fact: Mapping[str, Any], superseded_by: str | None, at: datetime, known_at: datetime | None
            ) -> FactStatus:
    expired_at = fact.get("expired_at")
    if expired_at is not None and (known_at is None or expired_at <= known_at):
        return "expired"
    valid_to = fact.get("valid_to")
    if valid_to is not None and valid_to <= at:
        return "superseded" if superseded_by else "retracted"
    return "current"


def _view(row: Mapping[str, Any], at: datetime, known_at: datetime | None, cfg: ConfidenceSettings) -> FactView:
    fact = native_props(row["fact"], drop=("read_at",))
    status = _status(fact, row["superseded_by"], at, known_at)
    then = row.get("then")
    if then is not None:  # as it stood at known_at (see facts/at)
        fact.update(native_props(then))
    moment = min(at, known_at) if then is not None and known_at is not None else at
    confidence = score(
        source=fact["source"], reinforcement_count=fact.get("reinforcement_count") or 0,
        recorded_at=fact["recorded_at"], last_reinforced_at=fact.get("last_reinforced_at"),
        last_accessed_at=fact.get("last_accessed_at"), ended=status != "current", at=moment, cfg=cfg,
    )
    return FactView.model_validate({
        **fact, "subject": row["subject"], "object_entity_id": row["object_entity_id"],
        "superseded_by": row["superseded_by"], "status": status, "confidence": confidence,
        **{k: native_props(row[k]) for k in ("recorded_by", "expired_by") if row.get(k)},
    })


async def facts(store: Store, cfg: ConfidenceSettings, namespace: str, query: FactQuery) -> list[FactView]:
    """The subject's facts holding at `as_of` (None: now) in the belief at `known_at` (None: now);
    with `include_superseded`, also those that had ended by `as_of` (confidence 0). Marks them read."""
    subject, predicate, as_of, known_at = query.subject, query.predicate, query.as_of, query.known_at
    now = datetime.now(timezone.utc)
    at = as_utc(as_of) if as_of is not None else now
    known = as_utc(known_at) if known_at is not None else None
    rows = await store.write(
        "facts/at", namespace=namespace, subject_key=entity_key(subject),
        predicate=predicate_key(predicate) if predicate is not None else None,
        as_of=at, known_at=known, include_superseded=query.include_superseded, now=now,
        read_until=min(at, known) if known is not None else at,
    )
    return [_view(r, at, known, cfg) for r in rows]


async def history(store: Store, cfg: ConfidenceSettings, namespace: str, query: FactHistoryQuery) -> list[FactView]:
    """Every interval of the subject's facts believed at `known_at` (None: now), in valid-time order,
    each with the fact that superseded it; `include_expired` adds the versions belief replaced."""
    predicate, known_at = query.predicate, query.known_at
    now = datetime.now(timezone.utc)
    known = as_utc(known_at) if known_at is not None else None
    rows = await store.read(
        "facts/history", namespace=namespace, subject_key=entity_key(query.subject),
        predicate=predicate_key(predicate) if predicate is not None else None,
        known_at=known, include_expired=query.include_expired,
    )
    return [_view(r, now, known, cfg) for r in rows]
