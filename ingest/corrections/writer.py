"""Writing corrections: the path `Memory.add_correction` and the extractor both take.

The normalized rule text is embedded outside any transaction. The write runs in one transaction
that first locks the namespace's `(:CorrectionLock)` (correction writers of a namespace queue, so
two of them never both add the same rule), finds the live neighbours (exact cosine in small
namespaces, the `correction_embedding` index in large ones), lets the judge's verdict or the
deterministic policy decide (`kg.ingest.corrections.policy`), and writes exactly that plan.
Statuses are graduated at the moment the correction was last seen; decay is applied by reads and
by the nightly job.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from kg.core.embedders.base import Embedder, embed_async
from kg.core.models.correction_weight import CorrectionState, confidence_for, half_life_for, status_at
from kg.core.models.corrections import CORRECTION_TYPES, CorrectionResult, CorrectionStatus
from kg.core.models.requests import CorrectionReport
from kg.core.models.turns import as_utc
from kg.core.models.values import native
from kg.core.settings.memory import CorrectionSettings, VectorSearchSettings
from kg.core.store.store import Store, Tx

from .normalize import normalize
from .policy import (
    Candidate,
    CorrectionJudge,
    CorrectionPlan,
    Neighbour,
    decide,
    fingerprint,
    plan_from_verdict,
)

_REASONS = {"contradicts": "contradicted", "supersedes": "superseded"}



def state_of(row: Mapping[str, Any]) -> CorrectionState:
    return CorrectionState(
        confidence=row["confidence"], reinforcement_count=row["reinforcement_count"],
        first_seen_at=native(row["first_seen_at"]), last_seen_at=native(row["last_seen_at"]),
        half_life_days=row["half_life_days"], confirmed=row.get("confirmed_at") is not None)


class CorrectionWriter:
    def __init__(self, store: Store, embedder: Embedder, cfg: CorrectionSettings,
                 judge: CorrectionJudge | None = None, vectors: VectorSearchSettings | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.cfg = cfg
        self.judge = judge
        self.vectors = vectors or VectorSearchSettings()

    async def add(self, namespace: str, correction: CorrectionReport, *, tx: Tx | None = None,
                  provenance: Mapping[str, Any] | None = None) -> CorrectionResult:
        """`tx`: write in the caller's transaction (post-session indexing) instead of a new one;
        `provenance`: extra properties for a new correction (extractor, model, prompt_version)."""
        session_id, rule_text, correction_type = correction.session_id, correction.rule_text, correction.correction_type
        seen_at, confidence = correction.seen_at, correction.confidence
        if correction_type not in CORRECTION_TYPES:
            raise ValueError(f"correction_type must be one of {CORRECTION_TYPES}, got {correction_type!r}")
        if not session_id or not session_id.strip():
            raise ValueError("a correction needs the id of the session it was stated in")
        text = " ".join(rule_text.split())
        key = normalize(text)
        if not key:
            raise ValueError(f"not a rule: {rule_text!r}")
        seen = as_utc(seen_at) if seen_at is not None else datetime.now(timezone.utc)
        candidate = Candidate(text, key, session_id, seen, correction_type)
        [vector] = await embed_async(self.embedder, [key])
        turn_ids = list(dict.fromkeys(correction.evidence_turn_ids))
        props = {
            "namespace": namespace, "correction_type": correction_type, "rule_text": text, "rule_key": key,
            "original_behavior": _clean(correction.original_behavior),
            "corrected_behavior": _clean(correction.corrected_behavior),
            "confidence": confidence if confidence is not None else confidence_for(correction_type, self.cfg),
            "half_life_days": half_life_for(correction_type, self.cfg), "embedding_model": self.embedder.name,
            "trust": None if correction.trust == "trusted" else correction.trust, **(provenance or {}),
        }
        trust = correction.trust

        judged: tuple[Any, CorrectionPlan] | None = None
        if self.judge is not None:
            [count] = await self.store.read("corrections/live_count", namespace=namespace)
            seen_neighbours, _ = await self._neighbours(self.store.read, namespace, session_id, vector, count["live"],
                                                        trust)
            verdict = await self.judge.judge(candidate, seen_neighbours)
            plan = plan_from_verdict(verdict, candidate, seen_neighbours, self.judge.name) if verdict else None
            if plan is not None:
                judged = (fingerprint(seen_neighbours), plan)

        async def work(tx: Tx) -> CorrectionResult:
            [lock] = await tx.run("corrections/lock", namespace=namespace, bump=1)
            neighbours, stored = await self._neighbours(tx.run, namespace, session_id, vector, lock["live"], trust)
            if judged is not None and judged[0] == fingerprint(neighbours):
                plan = judged[1]
            else:
                plan = decide(candidate, neighbours, self.cfg)
            return await self._write(tx, plan, candidate, neighbours, stored, props, vector, turn_ids)

        if tx is not None:
            return await work(tx)
        return await self.store.transaction(work)

    async def _neighbours(self, run: Any, namespace: str, session_id: str, vector: list[float], live: int,
                          trust: str) -> tuple[list[Neighbour], dict[str, Mapping[str, Any]]]:
        """The live corrections of the candidate's trust level near it: an untrusted statement never
        meets a trusted one (it can neither reinforce nor invalidate it)."""
        cfg = self.cfg
        params = dict(namespace=namespace, session_id=session_id, vector=vector, k=cfg.neighbours, trust=trust,
                      min_similarity=min(cfg.duplicate_similarity, cfg.contradiction_similarity,
                                         cfg.related_similarity))
        if not self.vectors.exact("corrections", live):
            fetch = self.vectors.index_fetch("corrections", cfg.neighbours)
            rows = await run("corrections/neighbours_index", fetch=fetch, **params)
        else:
            rows = await run("corrections/neighbours_exact", **params)
        return [_neighbour(r) for r in rows], {r["correction"]["id"]: r["correction"] for r in rows}

    async def _write(self, tx: Tx, plan: CorrectionPlan, candidate: Candidate, neighbours: Sequence[Neighbour],
                     stored: Mapping[str, Mapping[str, Any]], props: dict[str, Any], vector: list[float],
                     turn_ids: list[str]) -> CorrectionResult:
        seen, namespace = candidate.seen_at, props["namespace"]
        if plan.creates:
            target_id = f"cor_{uuid.uuid4().hex}"
            state = CorrectionState(props["confidence"], 1, seen, seen, props["half_life_days"])
            status: CorrectionStatus = _held(status_at(state, seen, self.cfg), props)
            row = {**props, "id": target_id, "reinforcement_count": 1, "first_seen_at": seen, "last_seen_at": seen,
                   "status": status, "decided_by": plan.decided_by}  # "policy" or the judge (with its prompt version)
            await tx.run("corrections/create", props=row, embedding=vector)
            count = 1
        else:
            assert plan.target_id is not None
            target_id = plan.target_id
            before = state_of(stored[target_id])
            in_session = next(n.in_session for n in neighbours if n.id == target_id)
            count, status = before.reinforcement_count, stored[target_id]["status"]
            if not in_session and plan.decision != "noop":  # a session repeating itself counts once
                state = CorrectionState(
                    confidence=max(before.confidence, props["confidence"]),
                    reinforcement_count=before.reinforcement_count + 1,
                    first_seen_at=min(before.first_seen_at, seen), last_seen_at=max(before.last_seen_at, seen),
                    half_life_days=before.half_life_days, confirmed=before.confirmed)
                status, count = _held(status_at(state, state.last_seen_at, self.cfg), props), state.reinforcement_count
                await tx.run("corrections/update", rows=[{"id": target_id, "props": {
                    "reinforcement_count": count, "confidence": state.confidence, "status": status,
                    "first_seen_at": state.first_seen_at, "last_seen_at": state.last_seen_at}}])
        await tx.run("corrections/session", id=target_id, namespace=namespace,
                     session_id=candidate.session_id, seen_at=seen)
        if turn_ids:
            await tx.run("corrections/evidence", id=target_id, turn_ids=turn_ids)
        rows = [{"id": c.id, "by": target_id, "type": c.type, "reason": _REASONS[c.type], "similarity": c.similarity,
                 "at": seen} for c in plan.invalidate]
        rows += [{"id": target_id, "by": c.id, "type": c.type, "reason": _REASONS[c.type],  # learned late: now
                  "similarity": c.similarity, "at": datetime.now(timezone.utc)} for c in plan.stale_against[:1]]
        if rows:
            await tx.run("corrections/invalidate", rows=rows)
        if plan.related:
            await tx.run("corrections/link", links=[
                {"from": target_id, "to": i, "type": "related", "similarity": s, "at": seen} for i, s in plan.related])
        invalidated = [c.id for c in plan.invalidate] + ([target_id] if plan.stale_against else [])
        return CorrectionResult(decision=plan.decision, correction_id=target_id, status=status,
                                reinforcement_count=count, invalidated_ids=invalidated,
                                related_ids=[i for i, _ in plan.related], decided_by=plan.decided_by)

    async def confirm(self, namespace: str, correction_id: str, at: datetime | None = None) -> CorrectionStatus:
        """An explicit confirmation: full confidence, the confirmed half-life, seen now; a rule."""
        when = as_utc(at) if at is not None else datetime.now(timezone.utc)

        async def work(tx: Tx) -> CorrectionStatus:
            await tx.run("corrections/lock", namespace=namespace, bump=1)
            found = await tx.run("corrections/state", namespace=namespace, id=correction_id)
            if not found:
                raise KeyError(f"no live correction {correction_id!r} in namespace {namespace!r}")
            before = state_of(found[0]["correction"])
            state = CorrectionState(1.0, before.reinforcement_count, before.first_seen_at,
                                    max(before.last_seen_at, when), self.cfg.confirmed_half_life_days, True)
            status = status_at(state, state.last_seen_at, self.cfg)
            await tx.run("corrections/confirm", namespace=namespace, id=correction_id, props={
                "confirmed_at": when, "confidence": 1.0, "half_life_days": state.half_life_days,
                "last_seen_at": state.last_seen_at, "status": status, "trust": None})
            return status

        return await self.store.transaction(work)


async def trust_correction(tx: Tx, namespace: str, correction_id: str, when: datetime,
                           cfg: CorrectionSettings) -> CorrectionStatus | None:
    """A person confirmed an untrusted correction: from now on it is trusted, graduated by what it
    earned like any other (not a rule by this alone: `confirm_rule` is that). None: no such live one."""
    await tx.run("corrections/lock", namespace=namespace, bump=1)
    found = await tx.run("corrections/state", namespace=namespace, id=correction_id)
    if not found:
        return None
    state = state_of(found[0]["correction"])
    status = status_at(state, state.last_seen_at, cfg)
    await tx.run("corrections/confirm", namespace=namespace, id=correction_id, props={
        "status": status, "trust": None, "trust_confirmed_at": when})
    return status


async def regraduate(tx: Tx, namespace: str, ids: Sequence[str], cfg: CorrectionSettings) -> None:
    """After an erase: each correction's reinforcement, span and status again from the sessions that
    still state it (a rule it no longer earns steps down; a confirmed one stays a rule)."""
    if not ids:
        return
    rows = []
    for row in await tx.run("corrections/states", namespace=namespace, ids=sorted(set(ids))):
        c, seen = row["correction"], sorted(native(x) for x in row["seen"] if x is not None)
        if not seen:
            continue
        state = CorrectionState(c["confidence"], len(seen), seen[0], seen[-1], c["half_life_days"],
                                c.get("confirmed_at") is not None)
        status = _held(status_at(state, state.last_seen_at, cfg), c)
        rows.append({"id": c["id"], "props": {"reinforcement_count": len(seen), "first_seen_at": seen[0],
                                              "last_seen_at": seen[-1], "status": status}})
    if rows:
        await tx.run("corrections/update", rows=rows)


def _held(status: CorrectionStatus, props: Mapping[str, Any]) -> CorrectionStatus:
    """An untrusted correction stays a correction, whatever it earns, until confirmed."""
    return status if props.get("trust") is None else "correction"


def _neighbour(row: Mapping[str, Any]) -> Neighbour:
    c = row["correction"]
    return Neighbour(id=c["id"], key=c["rule_key"], rule_text=c["rule_text"], similarity=float(row["similarity"]),
                     last_seen_at=native(c["last_seen_at"]), in_session=bool(row["in_session"]),
                     reinforcement_count=c["reinforcement_count"])


def _clean(text: str | None) -> str | None:
    cleaned = " ".join(text.split()) if text else ""
    return cleaned or None
