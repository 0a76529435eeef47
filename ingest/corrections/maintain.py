"""The nightly corrections job: cluster, resolve contradictions and merge near-duplicates inside
clusters, promote and decay, store the clusters, write a report.

The namespace's live corrections are read and the plan is computed outside any transaction
(clustering can take seconds); the write then locks the namespace and checks the lock's write
counter: if a correction arrived meanwhile, the run starts over (at most `_ATTEMPTS` times).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from kg.core.models.correction_weight import CorrectionState, status_at, weight_at
from kg.core.models.corrections import STATUSES, ClusterReport, MaintenanceReport, MergeReport, StatusChange
from kg.core.models.turns import as_utc
from kg.core.models.values import native_props
from kg.core.settings.memory import CorrectionSettings
from kg.core.store.store import Store, Tx

from .clustering import Contradiction, Member, Merge, cluster_labels, contradictions, keyphrases, merges

_ATTEMPTS = 3
_REASONS = {"contradicts": "contradicted", "supersedes": "superseded"}


class ClusterLabeler(Protocol):
    """Names a cluster from its rule texts (an LLM backend implements this); None: keyphrases."""

    async def label(self, rule_texts: Sequence[str]) -> str | None: ...


class _Changed(Exception):
    pass



async def maintain(store: Store, cfg: CorrectionSettings, namespace: str, now: datetime | None = None,
                   labeler: ClusterLabeler | None = None) -> MaintenanceReport:
    at = as_utc(now) if now is not None else datetime.now(timezone.utc)
    for _ in range(_ATTEMPTS):
        [lock] = await store.read("corrections/live_version", namespace=namespace)
        rows = await store.read("corrections/for_maintenance", namespace=namespace)
        job = await _Job.plan(rows, cfg, namespace, at, labeler)
        try:
            await store.transaction(functools.partial(job.write, version=lock["version"]))
        except _Changed:
            continue
        counted = await store.read("corrections/counts", namespace=namespace)
        report = job.report({r["status"]: r["count"] for r in counted})
        return _write_files(report, cfg.clustering.report_dir)
    raise RuntimeError(f"corrections of {namespace!r} kept changing during {_ATTEMPTS} maintenance attempts")


class _Job:
    def __init__(self, rows: Sequence[Mapping[str, Any]], cfg: CorrectionSettings, namespace: str, at: datetime) -> None:
        self.cfg, self.namespace, self.at = cfg, namespace, at
        self.rows = {r["correction"]["id"]: {**native_props(r["correction"]),
                                             "session_ids": set(r["session_ids"])} for r in rows}
        self.order = list(self.rows)  # clustered: live corrections and those merged into them
        self.merged_before = {r["correction"]["id"] for r in rows if r["merged"]}
        self.clusters: list[ClusterReport] = []
        self.labels: list[int] = []
        self.reduced = False
        self.contradictions: list[Contradiction] = []
        self.merges: list[Merge] = []
        self.changes: list[StatusChange] = []
        self.updates: list[dict[str, Any]] = []

    @classmethod
    async def plan(cls, rows: Sequence[Mapping[str, Any]], cfg: CorrectionSettings, namespace: str, at: datetime,
                   labeler: ClusterLabeler | None) -> "_Job":
        job = cls(rows, cfg, namespace, at)
        if not job.order:  # no (trusted) live correction: nothing to cluster
            return job
        members = [job._member(job.rows[i]) for i in job.order]
        vectors = np.array([job.rows[i]["embedding"] for i in job.order], dtype=np.float32).reshape(len(members), -1)
        if len(members):
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        job.labels, job.reduced = await asyncio.to_thread(cluster_labels, vectors, cfg.clustering)
        sims = vectors @ vectors.T
        # Only live corrections can contradict, merge or graduate: hide the merged ones from those.
        live_labels = [-1 if i in job.merged_before else lab for i, lab in zip(job.order, job.labels)]
        job.contradictions = contradictions(members, live_labels, sims)
        losers = {c.loser for c in job.contradictions}
        job.merges = merges(members, live_labels, sims, cfg.clustering.merge_similarity, losers)
        await job._name_clusters(labeler)
        job._graduate(losers | {m.absorbed for m in job.merges} | job.merged_before)
        return job

    def _member(self, row: Mapping[str, Any]) -> Member:
        return Member(row["id"], row["rule_key"], row["rule_text"], row["reinforcement_count"],
                      row["first_seen_at"].timestamp(), row["last_seen_at"].timestamp(),
                      row.get("confirmed_at") is not None)

    async def _name_clusters(self, labeler: ClusterLabeler | None) -> None:
        all_keys = [self.rows[i]["rule_key"] for i in self.order]
        for label in sorted(set(self.labels) - {-1}):
            ids = [i for i, lab in zip(self.order, self.labels) if lab == label]
            texts = [self.rows[i]["rule_text"] for i in ids]
            phrases = keyphrases([self.rows[i]["rule_key"] for i in ids], all_keys)
            name = (await labeler.label(texts) if labeler is not None else None) or " / ".join(phrases)
            digest = hashlib.sha256("\x1f".join([self.namespace, *sorted(ids)]).encode()).hexdigest()[:24]
            self.clusters.append(ClusterReport(id=f"ccl_{digest}", label=name, keyphrases=phrases, member_ids=ids,
                                               rule_texts=texts))

    def _graduate(self, gone: set[str]) -> None:
        for merge in self.merges:  # fold the absorbed evidence into the survivor
            survivor, absorbed = self.rows[merge.survivor], self.rows[merge.absorbed]
            survivor["session_ids"] |= absorbed["session_ids"]
            survivor["first_seen_at"] = min(survivor["first_seen_at"], absorbed["first_seen_at"])
            survivor["last_seen_at"] = max(survivor["last_seen_at"], absorbed["last_seen_at"])
            survivor["confidence"] = max(survivor["confidence"], absorbed["confidence"])
        merged = {m.survivor for m in self.merges}
        for cid in self.order:
            if cid in gone:
                continue
            row = self.rows[cid]
            count = max(len(row["session_ids"]), 1) if cid in merged else row["reinforcement_count"]
            state = CorrectionState(row["confidence"], count, row["first_seen_at"], row["last_seen_at"],
                                    row["half_life_days"], row.get("confirmed_at") is not None)
            status = status_at(state, max(self.at, state.last_seen_at), self.cfg)
            if status != row["status"]:
                self.changes.append(StatusChange(id=cid, rule_text=row["rule_text"], before=row["status"],
                                                 after=status, weight=weight_at(state, self.at, self.cfg)))
            if status != row["status"] or cid in merged:
                self.updates.append({"id": cid, "props": {
                    "status": status, "reinforcement_count": count, "confidence": state.confidence,
                    "first_seen_at": state.first_seen_at, "last_seen_at": state.last_seen_at}})

    async def write(self, tx: Tx, version: int) -> None:
        [lock] = await tx.run("corrections/lock", namespace=self.namespace, bump=1)
        if lock["version"] != version + 1:
            raise _Changed()
        invalidations = [{"id": c.loser, "by": c.winner, "type": c.type, "reason": _REASONS[c.type],
                          "similarity": c.similarity, "at": self.at} for c in self.contradictions]
        invalidations += [{"id": m.absorbed, "by": m.survivor, "type": "duplicate", "reason": "merged",
                           "similarity": m.similarity, "at": self.at} for m in self.merges]
        if self.merges:
            await tx.run("corrections/absorb", rows=[{"survivor": m.survivor, "absorbed": m.absorbed}
                                                             for m in self.merges])
        if invalidations:
            await tx.run("corrections/invalidate", rows=invalidations)
        if self.updates:
            await tx.run("corrections/update", rows=self.updates)
        await tx.run("corrections/clusters_clear", namespace=self.namespace)
        if self.clusters:
            clusters = [{"id": c.id, "label": c.label, "keyphrases": c.keyphrases, "member_ids": c.member_ids,
                         "representative": self._representative(c.member_ids)} for c in self.clusters]
            await tx.run("corrections/clusters_create", namespace=self.namespace, clusters=clusters, at=self.at)

    def _representative(self, ids: list[str]) -> str:
        gone = {m.absorbed for m in self.merges} | {c.loser for c in self.contradictions} | self.merged_before
        live = [i for i in ids if i not in gone]
        best = max(live or ids, key=lambda i: (len(self.rows[i]["session_ids"]), self.rows[i]["reinforcement_count"], i))
        return self.rows[best]["rule_text"]

    def report(self, counts: Mapping[str, int]) -> MaintenanceReport:
        rank = STATUSES.index
        text = {i: r["rule_text"] for i, r in self.rows.items()}
        return MaintenanceReport(
            namespace=self.namespace, at=self.at, corrections=len(self.order) - len(self.merged_before),
            merged_before=len(self.merged_before), reduced_with_umap=self.reduced,
            clusters=self.clusters, noise=sum(1 for lab in self.labels if lab < 0),
            merged=[MergeReport(survivor_id=m.survivor, absorbed_id=m.absorbed, similarity=m.similarity,
                                survivor_text=text[m.survivor], absorbed_text=text[m.absorbed]) for m in self.merges],
            invalidated=[f"{text[c.loser]!r} {_REASONS[c.type]} by {text[c.winner]!r}" for c in self.contradictions],
            promoted=[c for c in self.changes if rank(c.after) > rank(c.before)],
            demoted=[c for c in self.changes if rank(c.after) < rank(c.before)],
            counts={s: int(counts.get(s, 0)) for s in (*STATUSES, "invalidated")},
        )


def _write_files(report: MaintenanceReport, folder: Path) -> MaintenanceReport:
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"corrections-{re.sub(r'[^A-Za-z0-9_.@-]', '_', report.namespace)}-{report.at:%Y%m%dT%H%M%SZ}"
    json_path, md_path = folder / f"{stem}.json", folder / f"{stem}.md"
    report = report.model_copy(update={"json_path": json_path, "markdown_path": md_path})
    json_path.write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    md_path.write_text(report.markdown(), encoding="utf-8")
    return report
