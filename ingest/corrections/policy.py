"""AUDN for one incoming correction: add, update (reinforce), delete (invalidate) or no-op.

`decide` is the deterministic policy, a pure function over plain data. A `CorrectionJudge` (an LLM
backend) may decide instead: its `Verdict` is checked against the same neighbours and turned into
the same `CorrectionPlan`; a verdict that names unknown corrections is ignored and the policy
decides.

The policy, over the live neighbours found by cosine of normalized rule texts:
- a neighbour at >= `contradiction_similarity` whose shape conflicts (`normalize.conflict`:
  "do X" / "do not X", "X instead of Y" / "Y instead of X", "use Y" / "X instead of Y") is
  invalidated when it was last seen before this statement, and it `contradicts` or `supersedes`
  it; when it was seen later, this statement is the stale one and is stored already invalidated;
- otherwise the most similar neighbour at >= `duplicate_similarity` is reinforced, unless this
  session already stated it (a session repeating itself counts once: no-op);
- otherwise a new correction is added, linked `related` to neighbours at >= `related_similarity`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, Sequence

from kg.core.models.corrections import Decision, LinkType
from kg.core.settings.memory import CorrectionSettings
from kg.core.vocabulary import CorrectionAction

from .normalize import RuleShape, conflict, shape


class Rule:
    """A correction's normalized rule text (`key`), and the shape the policy compares (`normalize.shape`)."""

    key: str

    @property
    def shape(self) -> RuleShape:
        return shape(self.key)


@dataclass(frozen=True)
class Candidate(Rule):
    """The incoming statement."""

    rule_text: str
    key: str  # normalized rule text
    session_id: str
    seen_at: datetime
    correction_type: str


@dataclass(frozen=True)
class Neighbour(Rule):
    """A live correction of the namespace near the candidate."""

    id: str
    key: str
    rule_text: str
    similarity: float  # cosine in [-1, 1]
    last_seen_at: datetime
    in_session: bool  # already stated in the candidate's session
    reinforcement_count: int = 1


@dataclass(frozen=True)
class Conflict:
    id: str
    type: LinkType  # "contradicts" or "supersedes"
    similarity: float


@dataclass(frozen=True)
class CorrectionPlan:
    decision: Decision
    target_id: str | None = None  # reinforced or no-op: the existing correction; None: create one
    invalidate: tuple[Conflict, ...] = ()  # older corrections this statement wins against
    stale_against: tuple[Conflict, ...] = ()  # newer corrections it loses to: stored invalidated
    related: tuple[tuple[str, float], ...] = ()
    decided_by: str = "policy"

    @property
    def creates(self) -> bool:
        return self.target_id is None


Action = CorrectionAction


@dataclass(frozen=True)
class Verdict:
    """A judge's answer: `target_id` for reinforce/noop, `invalidate` ids with their link type; for
    "invalidate" without a target the new statement is added and wins against those ids."""

    action: Action
    target_id: str | None = None
    invalidate: tuple[tuple[str, LinkType], ...] = field(default_factory=tuple)


class CorrectionJudge(Protocol):
    """Decides AUDN instead of the deterministic policy (an LLM backend implements this).

    Called outside any transaction with the neighbours the policy would see; returning None lets
    the policy decide. If the neighbours changed before the write, the policy decides.
    """

    @property
    def name(self) -> str: ...

    async def judge(self, candidate: Candidate, neighbours: Sequence[Neighbour]) -> Verdict | None: ...


def decide(candidate: Candidate, neighbours: Sequence[Neighbour], cfg: CorrectionSettings) -> CorrectionPlan:
    new = candidate.shape
    conflicts: list[tuple[Neighbour, LinkType]] = []
    for n in neighbours:
        if n.similarity >= cfg.contradiction_similarity and (kind := conflict(new, n.shape)) is not None:
            conflicts.append((n, kind))
    conflicting = {n.id for n, _ in conflicts}
    later = tuple(Conflict(n.id, kind, n.similarity) for n, kind in conflicts if n.last_seen_at > candidate.seen_at)
    if later:
        return CorrectionPlan("invalidated", stale_against=later)
    beaten = tuple(Conflict(n.id, kind, n.similarity) for n, kind in conflicts)
    duplicates = [n for n in neighbours if n.similarity >= cfg.duplicate_similarity and n.id not in conflicting]
    if duplicates:
        target = max(duplicates, key=lambda n: (n.similarity, n.reinforcement_count, n.id))
        decision: Decision = "invalidated" if beaten else ("noop" if target.in_session else "reinforced")
        return CorrectionPlan(decision, target_id=target.id, invalidate=beaten)
    related = tuple((n.id, n.similarity) for n in neighbours
                    if n.similarity >= cfg.related_similarity and n.id not in conflicting)
    return CorrectionPlan("invalidated" if beaten else "added", invalidate=beaten, related=related)


def plan_from_verdict(
    verdict: Verdict, candidate: Candidate, neighbours: Sequence[Neighbour], judge: str
) -> CorrectionPlan | None:
    """The plan a judge's verdict means, or None when it names corrections that are not neighbours."""
    by_id = {n.id: n for n in neighbours}
    if any(i not in by_id for i, _ in verdict.invalidate):
        return None
    beaten = tuple(Conflict(i, kind, by_id[i].similarity) for i, kind in verdict.invalidate)
    if verdict.action in ("reinforce", "noop"):
        target = by_id.get(verdict.target_id or "")
        if target is None:
            return None
        decision: Decision = "invalidated" if beaten else (
            "noop" if target.in_session or verdict.action == "noop" else "reinforced")
        return CorrectionPlan(decision, target_id=target.id, invalidate=beaten, decided_by=judge)
    if verdict.action == "invalidate" and not beaten:
        return None
    return CorrectionPlan("invalidated" if beaten else "added", invalidate=beaten, decided_by=judge)


def fingerprint(neighbours: Sequence[Neighbour]) -> tuple[tuple[str, int, bool], ...]:
    """What a verdict was based on: if this differs at write time, the verdict is stale."""
    return tuple(sorted((n.id, n.reinforcement_count, n.in_session) for n in neighbours))
