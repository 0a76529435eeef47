"""Corrections as they cross the public API: what `add_correction` decided, what browsing shows,
the core rules handed to an agent's prompt, and the nightly maintenance report."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from kg.core.vocabulary import Trust

CorrectionStatus = Literal["correction", "pattern", "preference", "rule"]
STATUSES: tuple[CorrectionStatus, ...] = ("correction", "pattern", "preference", "rule")  # weakest first
CorrectionType = Literal["preference", "factual", "style", "process", "tool_usage"]
CORRECTION_TYPES: tuple[str, ...] = ("preference", "factual", "style", "process", "tool_usage")
LinkType = Literal["duplicate", "related", "supersedes", "contradicts"]
Decision = Literal["added", "reinforced", "invalidated", "noop"]
InvalidatedReason = Literal["contradicted", "superseded", "merged"]


class CorrectionResult(BaseModel):
    """What one `add_correction` did.

    added: a new correction. reinforced: an existing one seen in one more session. invalidated:
    the new (or reinforced) correction contradicts older ones, which are kept with `invalidated_at`
    set, or it arrived stale and was itself stored invalidated. noop: the same session said it again.
    """

    decision: Decision
    correction_id: str  # the correction this statement now counts for
    status: CorrectionStatus
    reinforcement_count: int
    invalidated_ids: list[str] = Field(default_factory=list)
    related_ids: list[str] = Field(default_factory=list)
    decided_by: str = "policy"  # "policy" or the judge's name


class CorrectionView(BaseModel):
    """A stored correction (a rule the user taught), with its status and weight."""

    id: str
    namespace: str
    correction_type: str
    rule_text: str
    rule_key: str  # the normalized rule text that was embedded
    original_behavior: str | None = None
    corrected_behavior: str | None = None
    confidence: float
    reinforcement_count: int
    half_life_days: float
    first_seen_at: datetime
    last_seen_at: datetime
    status: CorrectionStatus
    confirmed_at: datetime | None = None
    invalidated_at: datetime | None = None
    invalidated_reason: InvalidatedReason | None = None
    invalidated_by: str | None = None  # the correction that contradicted, superseded or absorbed it
    session_ids: list[str] = Field(default_factory=list)
    trust: Trust = "trusted"  # untrusted: stays a correction, out of core_rules, until confirmed
    weight: float  # effective weight at the moment of the read


class CoreRules(BaseModel):
    """The rules and strong preferences of a namespace, strongest first, ready for a prompt."""

    namespace: str
    at: datetime
    rules: list[CorrectionView]
    preferences: list[CorrectionView]

    def render(self, title: str = "Rules from past corrections") -> str:
        """A markdown block to put in an agent's system prompt ("" when there is nothing)."""
        if not (self.rules or self.preferences):
            return ""
        lines = [f"## {title}"]
        if self.rules:
            lines += ["", "Always follow these:"] + [f"- {_sentence(c.rule_text)}" for c in self.rules]
        if self.preferences:
            lines += ["", "Strong preferences:"] + [f"- {_sentence(c.rule_text)}" for c in self.preferences]
        return "\n".join(lines) + "\n"


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text[-1:] in ".!?" else text + "."


class ClusterView(BaseModel):
    """One cluster of corrections from the last `maintain_corrections` run."""

    id: str
    namespace: str
    label: str
    keyphrases: list[str]
    representative: str  # rule text of its most reinforced live member
    members: int  # live members
    reinforcement: int  # sum of the live members' reinforcement counts
    statuses: list[CorrectionStatus]


class ClusterReport(BaseModel):
    """A cluster of similar corrections found by maintenance, with its label and members."""

    id: str
    label: str
    keyphrases: list[str]
    member_ids: list[str]
    rule_texts: list[str]


class StatusChange(BaseModel):
    """A correction whose status maintenance changed (`before` -> `after`)."""

    id: str
    rule_text: str
    before: CorrectionStatus
    after: CorrectionStatus
    weight: float


class MergeReport(BaseModel):
    """Two near-identical corrections merged by maintenance: the survivor and the one it absorbed."""

    survivor_id: str
    absorbed_id: str
    similarity: float
    survivor_text: str
    absorbed_text: str


class MaintenanceReport(BaseModel):
    """What one nightly `maintain_corrections` run did; also written as JSON and markdown."""

    namespace: str
    at: datetime
    corrections: int  # live corrections considered
    merged_before: int  # corrections merged by earlier runs, clustered with their survivors
    reduced_with_umap: bool
    clusters: list[ClusterReport]
    noise: int  # live corrections in no cluster
    merged: list[MergeReport]
    invalidated: list[str]  # contradictions resolved inside a cluster (older side)
    promoted: list[StatusChange]
    demoted: list[StatusChange]
    counts: dict[str, int]  # live corrections per status after the run, plus "invalidated"
    json_path: Path | None = None
    markdown_path: Path | None = None

    def markdown(self) -> str:
        c = self.counts
        lines = [f"# Corrections maintenance: {self.namespace}", "",
                 f"Run at {self.at.isoformat()} over {self.corrections} live corrections "
                 f"and {self.merged_before} merged earlier"
                 f"{' (UMAP first)' if self.reduced_with_umap else ''}.", "",
                 "| rule | preference | pattern | correction | invalidated |", "|---|---|---|---|---|",
                 f"| {c.get('rule', 0)} | {c.get('preference', 0)} | {c.get('pattern', 0)} | "
                 f"{c.get('correction', 0)} | {c.get('invalidated', 0)} |", "",
                 f"## Clusters ({len(self.clusters)}, {self.noise} corrections in none)"]
        for cl in self.clusters:
            lines.append(f"- **{cl.label}** ({len(cl.member_ids)}): " + "; ".join(cl.rule_texts))
        sections = [("Merged near-duplicates", [f"- {m.absorbed_text!r} into {m.survivor_text!r} "
                                                f"(cosine {m.similarity:.2f})" for m in self.merged]),
                    ("Promoted", [f"- {p.rule_text!r}: {p.before} -> {p.after} (weight {p.weight:.2f})"
                                  for p in self.promoted]),
                    ("Demoted", [f"- {d.rule_text!r}: {d.before} -> {d.after} (weight {d.weight:.2f})"
                                 for d in self.demoted]),
                    ("Contradictions resolved", [f"- {i}" for i in self.invalidated])]
        for title, items in sections:
            lines += ["", f"## {title}", *(items or ["- none"])]
        return "\n".join(lines) + "\n"
