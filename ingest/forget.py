"""Forgetting that undoes its consequences: what an erase removes, and what it rewinds.

An erase deletes what the erased turns (a session, one turn) or a subject said, and then every
change that evidence caused, as if it had never been said:

- facts and relationships: the events the erased evidence alone carried are deleted, and each
  subject+predicate (or subject+type) that lost one is replayed from the events that remain
  (`kg.ingest.temporal.timeline`, which already places events in valid time), under a *rewind*
  event that records why (`kind = "rewind"`, `withdraws` = the erasure's id, no content). A value the
  erased statement had ended or superseded holds again; versions of a value nothing remaining
  asserts are deleted, the others expire and are recorded anew as the replay has them;
- corrections: one stated only in erased turns goes; one also stated elsewhere loses the erased
  session and is graduated again from the sessions left; one the erased statement invalidated
  holds again;
- entities: each one the erased turns mentioned is rebuilt from the mentions that remain
  (`kg.ingest.dedup.rebuild`), so aliases and attributes only they taught go.

Everything runs in the caller's transaction. `Erased` counts what went and what was restored,
for the content-free erasure record.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg.core.settings.tree import Settings
from kg.core.store.store import Store, Tx

from .corrections.writer import regraduate
from .dedup.rebuild import rebuild
from .facts import FactWriter
from .relationships import RelationshipWriter
from .temporal import Origin


@dataclass
class Erased:
    """What one erase removed (nodes per label, and `RELATES_TO`), what it restored, and the
    entities it touched (checked for orphans, rebuilt)."""

    counts: Counter[str] = field(default_factory=Counter)
    restored: Counter[str] = field(default_factory=Counter)
    touched: set[str] = field(default_factory=set)


def ids_in(groups: Iterable[Any]) -> set[str]:
    """Every id in nested lists of ids (the `ends` the statements return)."""
    out: set[str] = set()
    for group in groups:
        if isinstance(group, str):
            out.add(group)
        elif group:
            out |= ids_in(group)
    return out


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


class Forgetting:
    """The rewinding part of every erase, on one store and settings."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.settings = settings
        self.facts = FactWriter(store, settings)  # no predicate resolver: a rewind asks nobody
        self.relationships = RelationshipWriter(store, settings)

    def origin(self, erasure_id: str, scope: str, *slot: str) -> Origin:
        """The rewind event of one slot: content-free, named after the erasure (a retried
        transaction writes the same id)."""
        return Origin(event_id="rwd_" + _digest(erasure_id, *slot), withdraws=erasure_id, kind="rewind",
                      reason=f"erased {scope} {erasure_id}")

    async def evidence(self, tx: Tx, namespace: str, erasure_id: str, scope: str, turn_ids: Sequence[str],
                       session_id: str, whole_session: bool) -> Erased:
        """Forget what `turn_ids` (of `session_id`; all of it when `whole_session`) said, and rewind
        what it caused. The turns themselves are the caller's to delete, after this."""
        done = Erased()
        params = dict(namespace=namespace, session_id=session_id, turn_ids=list(turn_ids), whole_session=whole_session)
        slots: list[Mapping[str, str]] = []
        for row in await tx.run("erase/forget_facts", **params):
            done.counts[row["label"]] += row["erased"]
            done.touched |= ids_in(row["ends"])
            slots += [s for s in row["slots"] if s]
        await self.rewind_facts(tx, namespace, erasure_id, scope, slots, done)
        [row] = await tx.run("erase/forget_relationships", **params)
        done.counts.update({"RelationEvent": row["events"], "RELATES_TO": row["erased"]})
        done.touched |= ids_in(row["ends"])
        await self.rewind_relationships(tx, namespace, erasure_id, scope, row["slots"], done)
        [row] = await tx.run("erase/forget_corrections", **params)
        done.counts.update({"Correction": row["erased"], "CorrectionCluster": row["clusters"]})
        done.restored["Correction"] += len(row["restored"])
        await regraduate(tx, namespace, [*row["kept"], *row["restored"]], self.settings.memory.corrections)
        return done

    async def rewind_facts(self, tx: Tx, namespace: str, erasure_id: str, scope: str,
                           slots: Sequence[Mapping[str, str]], done: Erased) -> None:
        """Replay each fact slot that lost events from those that remain."""
        unique = list({(s["subject_key"], s["predicate"]): s for s in slots}.values())
        if not unique:
            return
        [row] = await tx.run("erase/forget_fact_values", namespace=namespace, slots=unique)
        done.counts["Fact"] += row["facts"]
        for slot in row["slots"]:
            key, predicate = slot["subject_key"], slot["predicate"]
            result = await self.facts.change(tx, namespace, key, predicate, self.origin(erasure_id, scope, key, predicate))
            if result is not None and result.fact_ids:
                done.restored["Fact"] += len(result.fact_ids)

    async def rewind_relationships(self, tx: Tx, namespace: str, erasure_id: str, scope: str,
                                   slots: Sequence[Mapping[str, str]], done: Erased) -> None:
        """Replay each relationship slot that lost events from those that remain."""
        for slot in {(s["subject_id"], s["relation"]): s for s in slots}.values():
            subject_id, relation = slot["subject_id"], slot["relation"]
            result = await self.relationships.change(tx, namespace, subject_id, relation,
                                                     self.origin(erasure_id, scope, subject_id, relation))
            if result is not None and result.edge_ids:
                done.restored["RELATES_TO"] += len(result.edge_ids)

    async def entities(self, tx: Tx, namespace: str, entity_ids: Iterable[str], done: Erased) -> None:
        """Rebuild the surviving entities the erased turns mentioned from the mentions that remain."""
        done.restored["Entity"] += await rebuild(tx, namespace, entity_ids, self.settings.memory.entity_deduplication)
