"""`AsyncMemory`'s forgetting: `erase_session`, `erase_subject`, `erase_namespace`.

Unlike `remember(..., op="retract")`, which keeps the history, an erase deletes the content
physically and leaves only an `(:Erasure)` record without it (see docs/forgetting.md).
"""

from __future__ import annotations

from kg.engine import Engine
import hashlib
import json
import uuid
from collections import Counter
from typing import Any, Iterable, Mapping

from kg.core.facts_models import entity_key
from kg.core.models import EraseScope, Erasure, check_namespace
from kg.core.store import Tx
from kg.access import LOCAL
from kg.core.values import native


def target_hash(namespace: str, scope: EraseScope, target: str) -> str:
    """What an erasure record keeps of its target: enough to answer "was X erased?", not X."""
    return "sha256:" + hashlib.sha256(f"{namespace}\x1f{scope}\x1f{target}".encode()).hexdigest()


def _ids(groups: Iterable[Any]) -> set[str]:
    out: set[str] = set()
    for group in groups:
        if isinstance(group, str):
            out.add(group)
        elif group:
            out |= _ids(group)
    return out


def _erasure(row: Mapping[str, Any]) -> Erasure:
    props = dict(row)
    props["erased_at"] = native(props["erased_at"])
    props["counts"] = json.loads(props["counts"])
    return Erasure.model_validate(props)


async def _orphans(tx: Tx, entity_ids: set[str], counts: Counter[str]) -> None:
    if not entity_ids:
        return
    [row] = await tx.run("queries/erase_orphans", entity_ids=sorted(entity_ids))
    counts.update({"FactSlot": row["slots"], "Entity": row["entities"], "EntityName": row["names"],
                   "NameKey": row["name_keys"], "Identifier": row["identifiers"]})


async def _record(tx: Tx, namespace: str, scope: EraseScope, target: str, by: str, counts: Counter[str]) -> Erasure:
    kept = {k: v for k, v in sorted(counts.items()) if v}
    [row] = await tx.run("queries/erasure_record", id=f"era_{uuid.uuid4().hex}", namespace=namespace, scope=scope,
                         target_hash=target_hash(namespace, scope, target), by=by, counts=json.dumps(kept))
    return _erasure(row["erasure"])


class EraseFacade(Engine):
    """Mixed into `AsyncMemory`, which provides `store`."""


    async def erase_session(self, namespace: str, session_id: str, by: str = LOCAL) -> Erasure:
        """Delete a session, its turns (and context keys), summaries, decisions and jobs. Facts, fact
        events, corrections and relationships whose only evidence was this session go with it; those
        with evidence elsewhere keep it and lose only their links here. Entities nothing refers to
        any more go too. KeyError: no such session."""
        check_namespace(namespace)

        async def work(tx: Tx) -> Erasure:
            found = await tx.run("queries/erase_session_find", namespace=namespace, session_id=session_id)
            if not found:
                raise KeyError(f"no session {session_id!r} in namespace {namespace!r}")
            turn_ids, touched = found[0]["turn_ids"], set(found[0]["mentioned"])
            params = dict(namespace=namespace, session_id=session_id, turn_ids=turn_ids)
            counts: Counter[str] = Counter()
            for row in await tx.run("queries/erase_session_evidenced", **params):
                counts[row["label"]] += row["erased"]
                touched |= _ids(row["ends"])
            [row] = await tx.run("queries/erase_session_corrections", **params)
            counts.update({"Correction": row["erased"], "CorrectionCluster": row["clusters"]})
            [row] = await tx.run("queries/erase_session_relationships", **params)
            counts["RELATES_TO"] += row["erased"]
            touched |= _ids(row["ends"])
            [row] = await tx.run("queries/erase_session_nodes", **params)
            counts.update({"Summary": row["summaries"], "Decision": row["decisions"], "Job": row["jobs"],
                           "Turn": row["turns"], "Session": 1})
            await _orphans(tx, touched, counts)
            return await _record(tx, namespace, "session", session_id, by, counts)

        return await self.store.transaction(work)

    async def erase_subject(self, namespace: str, subject: str, by: str = LOCAL) -> Erasure:
        """Delete every fact and fact event about `subject` (named as `remember` names it) and its
        fact slots, the facts that have it as their object, and its relationships; the entity too
        when nothing else (a turn's mention) refers to it. KeyError: no such subject."""
        check_namespace(namespace)
        key = entity_key(subject)

        async def work(tx: Tx) -> Erasure:
            [row] = await tx.run("queries/erase_subject", namespace=namespace, key=key)
            if not row["subjects"]:
                raise KeyError(f"no subject {subject!r} in namespace {namespace!r}")
            counts: Counter[str] = Counter({"Fact": row["facts"], "FactEvent": row["events"],
                                            "RELATES_TO": row["relationships"], "FactSlot": row["slots"]})
            await _orphans(tx, set(row["subject_ids"]) | set(row["touched"]), counts)
            return await _record(tx, namespace, "subject", key, by, counts)

        return await self.store.transaction(work)

    async def erase_namespace(self, namespace: str, by: str = LOCAL) -> Erasure:
        """Delete everything of a namespace except its erasure records (in batches), then record
        this erase. KeyError: the namespace holds nothing."""
        check_namespace(namespace)
        rows = await self.store.read("queries/erase_namespace_counts", namespace=namespace)
        if not rows:
            raise KeyError(f"namespace {namespace!r} holds no data")
        counts: Counter[str] = Counter({r["label"]: r["nodes"] for r in rows})
        await self.store.autocommit("queries/erase_namespace", namespace=namespace)

        async def work(tx: Tx) -> Erasure:
            return await _record(tx, namespace, "namespace", namespace, by, counts)

        return await self.store.transaction(work)

    async def erasures(self, namespace: str, limit: int = 100) -> list[Erasure]:
        """The namespace's erasure records, newest first."""
        rows = await self.store.read("queries/erasures_list", namespace=namespace, limit=limit)
        return [_erasure(r["erasure"]) for r in rows]
