"""Forgetting, behind `AsyncMemory.erase_session`, `erase_turn`, `erase_subject`, `erase_namespace`.

Unlike `remember(..., op="retract")`, which keeps the history, an erase deletes the content
physically, undoes what it caused (`kg.ingest.forget`: a fact it ended holds again, a rule it
helped graduate steps down, an alias it taught goes) and leaves only an `(:Erasure)` record
without content (see docs/forgetting.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections import Counter
from datetime import datetime, timezone
from typing import Any, AsyncContextManager, Callable, Mapping

from kg.core.models.facts import entity_key
from kg.core.models.turns import EraseScope, Erasure, check_namespace
from kg.core.models.values import native
from kg.core.settings.tree import Settings
from kg.core.store.store import Store, Tx
from kg.ingest.forget import Erased, Forgetting, ids_in
from kg.ingest.summaries.writer import SessionSummarizer

log = logging.getLogger(__name__)


def target_hash(namespace: str, scope: EraseScope, target: str) -> str:
    """What an erasure record keeps of its target: enough to answer "was X erased?", not X."""
    return "sha256:" + hashlib.sha256(f"{namespace}\x1f{scope}\x1f{target}".encode()).hexdigest()


def _erasure(row: Mapping[str, Any]) -> Erasure:
    props = dict(row)
    props["erased_at"] = native(props["erased_at"])
    props["counts"] = json.loads(props["counts"])
    props["restored"] = json.loads(props.get("restored") or "{}")
    return Erasure.model_validate(props)


async def _orphans(tx: Tx, entity_ids: set[str], counts: Counter[str]) -> None:
    if not entity_ids:
        return
    [row] = await tx.run("erase/orphans", entity_ids=sorted(entity_ids))
    counts.update({"FactSlot": row["slots"], "RelationSlot": row["relation_slots"], "Entity": row["entities"],
                   "EntityName": row["names"], "NameKey": row["name_keys"], "Identifier": row["identifiers"]})


async def _record(tx: Tx, erasure_id: str, namespace: str, scope: EraseScope, target: str, by: str,
                  done: Erased) -> Erasure:
    counts = {k: v for k, v in sorted(done.counts.items()) if v}
    restored = {k: v for k, v in sorted(done.restored.items()) if v}
    [row] = await tx.run("erase/record", id=erasure_id, namespace=namespace, scope=scope,
                         target_hash=target_hash(namespace, scope, target), by=by, counts=json.dumps(counts),
                         restored=json.dumps(restored))
    return _erasure(row["erasure"])


def _new_id() -> str:
    return f"era_{uuid.uuid4().hex}"


async def erase_session(store: Store, settings: Settings, namespace: str, session_id: str, by: str) -> Erasure:
    """A session and what only it caused, in one transaction (`AsyncMemory.erase_session`)."""
    check_namespace(namespace)
    erasure_id = _new_id()
    forgetting = Forgetting(store, settings)

    async def work(tx: Tx) -> Erasure:
        found = await tx.run("erase/session_find", namespace=namespace, session_id=session_id)
        if not found:
            raise KeyError(f"no session {session_id!r} in namespace {namespace!r}")
        turn_ids, mentioned = found[0]["turn_ids"], set(found[0]["mentioned"])
        done = await forgetting.evidence(tx, namespace, erasure_id, "session", turn_ids, session_id, True)
        [row] = await tx.run("erase/session_nodes", namespace=namespace, session_id=session_id)
        done.counts.update({"Summary": row["summaries"], "Decision": row["decisions"], "Job": row["jobs"],
                            "Turn": row["turns"], "Session": 1})
        await _orphans(tx, done.touched | mentioned, done.counts)
        await forgetting.entities(tx, namespace, mentioned, done)
        return await _record(tx, erasure_id, namespace, "session", session_id, by, done)

    return await store.transaction(work)

async def erase_turn(store: Store, settings: Settings, namespace: str, turn_id: str, by: str,
                     open_summarizer: Callable[[], AsyncContextManager[SessionSummarizer]]) -> Erasure:
    """One message and what only it caused; its session summarized again afterwards (`AsyncMemory.erase_turn`)."""
    check_namespace(namespace)
    erasure_id = _new_id()
    forgetting = Forgetting(store, settings)
    resummarize: tuple[str, bool] | None = None

    async def work(tx: Tx) -> tuple[Erasure, tuple[str, bool] | None]:
        found = await tx.run("erase/turn_find", namespace=namespace, turn_id=turn_id)
        if not found:
            raise KeyError(f"no turn {turn_id!r} in namespace {namespace!r}")
        session_id, mentioned = found[0]["session_id"], set(found[0]["mentioned"])
        only = found[0]["turns"] <= 1
        done = await forgetting.evidence(tx, namespace, erasure_id, "turn", [turn_id], session_id, only)
        if only:
            [row] = await tx.run("erase/session_nodes", namespace=namespace, session_id=session_id)
            done.counts.update({"Summary": row["summaries"], "Decision": row["decisions"], "Job": row["jobs"],
                                "Session": 1})
        else:
            [row] = await tx.run("erase/turn_nodes", namespace=namespace, session_id=session_id,
                                 turn_id=turn_id)
            done.counts.update({"Summary": row["summaries"], "Job": row["jobs"]})
            await tx.run("sessions/renumber", namespace=namespace, sessions=[session_id])
        done.counts["Turn"] += 1
        await _orphans(tx, done.touched | mentioned, done.counts)
        await forgetting.entities(tx, namespace, mentioned, done)
        again = (session_id, found[0]["status"] == "closed") if found[0]["summarized"] and not only else None
        return await _record(tx, erasure_id, namespace, "turn", turn_id, by, done), again

    erasure, resummarize = await store.transaction(work)
    if resummarize is not None:  # outside the erase: a summarizer may call an LLM
        session_id, closed = resummarize
        try:
            async with open_summarizer() as summarizer:
                await summarizer.summarize(namespace, session_id, datetime.now(timezone.utc), open_=not closed)
        except Exception as exc:  # noqa: BLE001 - the session is due again: the next sweep summarizes it
            log.warning("summarizing session again after a turn erase failed (%s); it is due again",
                        type(exc).__name__)
    return erasure

async def erase_subject(store: Store, settings: Settings, namespace: str, subject: str, by: str) -> Erasure:
    """A subject's facts, events, relationships and slots (`AsyncMemory.erase_subject`)."""
    check_namespace(namespace)
    key = entity_key(subject)
    erasure_id = _new_id()
    forgetting = Forgetting(store, settings)

    async def work(tx: Tx) -> Erasure:
        [rel] = await tx.run("erase/subject_relations", namespace=namespace, key=key)
        [row] = await tx.run("erase/subject", namespace=namespace, key=key)
        if not row["subjects"]:
            raise KeyError(f"no subject {subject!r} in namespace {namespace!r}")
        done = Erased()
        done.counts.update({"Fact": row["facts"], "FactEvent": row["events"], "RELATES_TO": row["relationships"],
                            "FactSlot": row["slots"], "RelationEvent": rel["events"],
                            "RelationSlot": rel["slots_erased"]})
        await forgetting.rewind_facts(tx, namespace, erasure_id, "subject", row["holder_slots"], done)
        await forgetting.rewind_relationships(tx, namespace, erasure_id, "subject", rel["slots"], done)
        await _orphans(tx, set(row["subject_ids"]) | ids_in(row["touched"]), done.counts)
        return await _record(tx, erasure_id, namespace, "subject", key, by, done)

    return await store.transaction(work)

async def erase_namespace(store: Store, namespace: str, by: str) -> Erasure:
    """Everything of a namespace but its erasure records (`AsyncMemory.erase_namespace`)."""
    check_namespace(namespace)
    rows = await store.read("erase/namespace_counts", namespace=namespace)
    if not rows:
        raise KeyError(f"namespace {namespace!r} holds no data")
    done = Erased(counts=Counter({r["label"]: r["nodes"] for r in rows}))
    await store.autocommit("erase/namespace", namespace=namespace)

    async def work(tx: Tx) -> Erasure:
        return await _record(tx, _new_id(), namespace, "namespace", namespace, by, done)

    return await store.transaction(work)

async def erasures(store: Store, namespace: str, limit: int = 100) -> list[Erasure]:
    """The namespace's erasure records, newest first."""
    rows = await store.read("erase/list", namespace=namespace, limit=limit)
    return [_erasure(r["erasure"]) for r in rows]
