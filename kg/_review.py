"""The review of what changed (docs/trust.md), behind `AsyncMemory.explain`, `changes`, `revert`
and `confirm`: explain a fact or relationship, list the changes since a moment, revert an automatic
change and confirm an untrusted statement. Each revert or confirmation is a new event: history is
never rewritten.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Mapping

from kg.core.models.limits import FieldError
from kg.core.models.trust import ChangeResult, Changes, Explanation
from kg.core.models.turns import as_utc, check_namespace
from kg.core.models.values import native
from kg.core.settings.tree import Settings
from kg.core.store.store import Store, Tx
from kg.explain import change_of, changes_of, explanation, replay
from kg.ingest.corrections.writer import regraduate, trust_correction
from kg.ingest.dedup.rebuild import rebuild
from kg.ingest.facts import FactWriter
from kg.ingest.facts import event_of as fact_event
from kg.ingest.relationships import RelationshipWriter
from kg.ingest.relationships import event_of as edge_event
from kg.ingest.temporal import FactEvent, Origin, withdrawn

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_UNDOABLE = ("superseded", "retracted")


async def explain(store: Store, settings: Settings, namespace: str, id: str) -> Explanation:
    """A version and its chain of events (`AsyncMemory.explain`)."""
    check_namespace(namespace)
    rows = await store.read("events/statement_chain", namespace=namespace, id=id)
    if not rows:
        raise KeyError(f"no fact or relationship {id!r} in namespace {namespace!r}")
    return explanation(namespace, rows[0], datetime.now(timezone.utc), settings)

async def changes(store: Store, settings: Settings, namespace: str, since: datetime | None = None,
                  limit: int = 100) -> Changes:
    """The changes since `since` (`AsyncMemory.changes`)."""
    check_namespace(namespace)
    if not 1 <= limit <= 1000:
        raise FieldError("limit", f"must be 1..1000, got {limit}")
    when = as_utc(since) if since is not None else _EPOCH
    rows = await store.read("events/changes_since", namespace=namespace, since=when, limit=limit)
    events, corrections, merges = changes_of(rows, when, settings)
    return Changes(namespace=namespace, since=when, events=events, corrections=corrections, merges=merges)

async def revert(store: Store, settings: Settings, namespace: str, event_id: str, by: str) -> ChangeResult:
    """Undo one change by a new event (`AsyncMemory.revert`)."""
    check_namespace(namespace)
    new_id = f"rvt_{uuid.uuid4().hex}"

    async def work(tx: Tx) -> ChangeResult:
        kind, target, slot, events = await _target(tx, namespace, event_id)
        if kind == "correction":
            return await _revert_correction(settings, tx, namespace, target)
        _, _, effects = replay(kind, slot.get("predicate") or slot["relation"], events, settings)
        effect, change = effects.get(event_id, "noop"), change_of(target)
        pure = [_pure(kind, e) for e in events]
        if event_id in withdrawn(pure):
            raise FieldError("event_id", f"{event_id} is already withdrawn or reverted")
        if change == "rewind":
            raise FieldError("event_id", "an erase cannot be reverted: what it removed is gone")
        if change is None and effect not in _UNDOABLE:
            raise FieldError("event_id", f"{event_id} {effect} nothing a revert could undo: it ended no "
                             "statement (to end its value, retract it; an untrusted one waits for confirm)")
        origin = Origin(event_id=new_id, withdraws=event_id, kind="revert", reason=f"reverted by {by}")
        return await _change(store, settings, tx, namespace, kind, slot, origin, target, "revert", event_id)

    return await store.transaction(work)

async def confirm(store: Store, settings: Settings, namespace: str, id: str, by: str) -> ChangeResult:
    """Confirm an untrusted statement, correction or held merge (`AsyncMemory.confirm`)."""
    check_namespace(namespace)
    new_id = f"cnf_{uuid.uuid4().hex}"
    now = datetime.now(timezone.utc)

    async def work(tx: Tx) -> ChangeResult:
        if id.startswith("mrg_"):
            return await _confirm_merge(settings, tx, namespace, id, now)
        kind, target, slot, events = await _target(tx, namespace, id)
        if (target.get("trust") or "trusted") == "trusted":
            raise FieldError("id", f"{id} is trusted already: nothing to confirm")
        if kind == "correction":
            status = await trust_correction(tx, namespace, id, now, settings.memory.corrections)
            if status is None:
                raise FieldError("id", f"correction {id} is invalidated: revert its invalidation first")
            return ChangeResult(change="confirm", target=id, kind="correction", decision=status, recorded_at=now)
        if any(e.get("confirms") == id and e["id"] not in withdrawn([_pure(kind, x) for x in events])
               for e in events):
            raise FieldError("id", f"{id} is confirmed already")
        origin = Origin(event_id=new_id, confirms=id, kind="confirm", reason=f"confirmed by {by}")
        return await _change(store, settings, tx, namespace, kind, slot, origin, target, "confirm", id)

    return await store.transaction(work)

async def _change(store: Store, settings: Settings, tx: Tx, namespace: str, kind: str, slot: Mapping[str, str],
                  origin: Origin, target: Mapping[str, Any], change: str, target_id: str) -> ChangeResult:
    if kind == "fact":
        done = await FactWriter(store, settings).change(
            tx, namespace, slot["subject_key"], slot["predicate"], origin, target.get("object_value") or "")
        assert done is not None
        created, expired, decision = done.fact_ids, done.expired_ids, done.decision
        at = done.recorded_at
    else:
        edge = await RelationshipWriter(store, settings).change(
            tx, namespace, slot["subject_id"], slot["relation"], origin, target.get("object_id") or "")
        assert edge is not None
        created, expired, decision, at = edge.edge_ids, edge.expired_ids, edge.decision, edge.recorded_at
    return ChangeResult(change=change, target=target_id, kind="fact" if kind == "fact" else "relationship",
                        event_id=origin.event_id, decision="reverted" if change == "revert" else decision,
                        created_ids=created, expired_ids=expired, recorded_at=at)

async def _confirm_merge(settings: Settings, tx: Tx, namespace: str, id: str, now: datetime) -> ChangeResult:
    rows = await tx.run("entities/merge_confirm", namespace=namespace, id=id)
    if not rows:
        raise KeyError(f"no held entity merge {id!r} in namespace {namespace!r}")
    await rebuild(tx, namespace, [r["entity_id"] for r in rows], settings.memory.entity_deduplication)
    return ChangeResult(change="confirm", target=id, kind="entity", decision="merged", recorded_at=now)

async def _revert_correction(settings: Settings, tx: Tx, namespace: str, target: Mapping[str, Any]) -> ChangeResult:
    if target.get("invalidated_at") is None:
        raise FieldError("event_id", f"correction {target['id']} is not invalidated: nothing to revert")
    [row] = await tx.run("corrections/revert", namespace=namespace, id=target["id"])
    await regraduate(tx, namespace, [target["id"], *row["survivors"]], settings.memory.corrections)
    [state] = await tx.run("corrections/state", namespace=namespace, id=target["id"])
    return ChangeResult(change="revert", target=target["id"], kind="correction",
                        decision=state["correction"]["status"], recorded_at=native(row["at"]))


async def _target(tx: Tx, namespace: str, id: str) -> tuple[str, dict[str, Any], dict[str, str], list[Any]]:
    rows = await tx.run("events/target", namespace=namespace, id=id)
    if not rows:
        raise KeyError(f"no event or correction {id!r} in namespace {namespace!r}")
    row = rows[0]
    return row["kind"], dict(row["target"]), dict(row["slot"] or {}), list(row["events"])


def _pure(kind: str, row: Mapping[str, Any]) -> FactEvent:
    return (fact_event if kind == "fact" else edge_event)(row)
