"""Point-in-time relationships: a subject's edges holding at valid time `as_of`, as believed at
transaction time `known_at`. The filters run in Cypher (`relationships/at`); a view in the past
shows the reinforcement counts of then, from the events learned by `known_at`."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Mapping

from kg.core.models.facts import entity_key, predicate_key
from kg.core.models.relationships import RelationshipStatus, RelationshipView
from kg.core.models.requests import RelationshipQuery
from kg.core.models.turns import as_utc
from kg.core.models.values import native_props
from kg.core.store.store import Store


def _status(edge: Mapping[str, Any], at: datetime, known_at: datetime | None) -> RelationshipStatus:
    expired_at = edge.get("expired_at")
    if expired_at is not None and (known_at is None or expired_at <= known_at):
        return "expired"
    valid_to = edge.get("valid_to")
    return "ended" if valid_to is not None and valid_to <= at else "current"


def _view(row: Mapping[str, Any], at: datetime, known_at: datetime | None) -> RelationshipView:
    edge = native_props(row["edge"])
    if row.get("then") is not None:  # counts as they stood at known_at
        edge.update(native_props(row["then"]))
    return RelationshipView.model_validate({
        **edge, "type": edge["relation"], "subject": row["subject"], "subject_key": row["subject_key"],
        "object": row["object"], "object_key": row["object_key"], "object_id": row["object_id"],
        "status": _status(edge, at, known_at),
    })


async def relationships(store: Store, namespace: str, query: RelationshipQuery) -> list[RelationshipView]:
    """The subject's relationships (of `type`, or all) holding at `as_of` (None: now) in the belief
    at `known_at` (None: now); with `include_ended`, also those that had ended by `as_of`."""
    as_of, known_at, type = query.as_of, query.known_at, query.type
    at = as_utc(as_of) if as_of is not None else datetime.now(timezone.utc)
    known = as_utc(known_at) if known_at is not None else None
    rows = await store.read(
        "relationships/at", namespace=namespace, subject_key=entity_key(query.subject),
        relation=predicate_key(type) if type is not None else None, as_of=at, known_at=known,
        include_ended=query.include_ended,
    )
    return [_view(r, at, known) for r in rows]
