"""The write-time judges' prompts, each answered by a small model:

- `predicate-contradiction-v1` (`Contradiction`): does a new value of a predicate of unknown
  cardinality contradict a current one?
- `correction-audn-v1` (`AUDNVerdict`): ADD / UPDATE (reinforce) / DELETE (invalidate) / NOOP for a
  new correction against numbered similar ones;
- `cluster-label-v1` (`ClusterLabel`): a short name for a cluster of corrections.

Asked by `kg.ingest.llm_judges`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import Messages
from kg.core.vocabulary import ConflictLink, CorrectionAction

PREDICATE_CONTRADICTION_V1 = "predicate-contradiction-v1"
CORRECTION_AUDN_V1 = "correction-audn-v1"
CLUSTER_LABEL_V1 = "cluster-label-v1"


class Candidate(Protocol):
    """What `correction-audn-v1` reads of the new correction (`kg.ingest.corrections.policy.Candidate`)."""

    @property
    def rule_text(self) -> str: ...
    @property
    def correction_type(self) -> str: ...


class Neighbour(Protocol):
    """What it reads of a similar existing one (`kg.ingest.corrections.policy.Neighbour`)."""

    @property
    def rule_text(self) -> str: ...
    @property
    def similarity(self) -> float: ...
    @property
    def reinforcement_count(self) -> int: ...


# -- predicate-contradiction-v1 ------------------------------------------------------------------

class Contradiction(BaseModel):
    """Whether the new value contradicts (replaces) a value currently believed."""

    contradicts: bool = Field(description="True when the new value and a current value cannot both hold now.")
    reason: str = Field("", description="One short sentence.")


_CONTRADICTION_SYSTEM_V1 = """\
You maintain the long-term memory of an AI assistant as subject / predicate / object facts. A new \
fact arrives for a predicate whose cardinality is unknown. Decide whether the new value contradicts \
one of the values currently believed, i.e. the subject can have only one of them at a time (a \
favorite, a current employer, a home city), so the new value replaces the old one. Values that \
can hold together (languages spoken, hobbies, things owned) do not contradict. Say false when unsure."""


def predicate_contradiction_v1(subject: str, predicate: str, new_value: str, current: Sequence[str]) -> Messages:
    lines = [f"Subject: {subject}", f"Predicate: {predicate}", "Currently believed values:"]
    lines += [f"- {v}" for v in current]
    lines += [f"New value: {new_value}", "", "Does the new value contradict a currently believed value?"]
    return [{"role": "system", "content": _CONTRADICTION_SYSTEM_V1}, {"role": "user", "content": "\n".join(lines)}]


PREDICATE_CONTRADICTION = Prompt(PREDICATE_CONTRADICTION_V1, predicate_contradiction_v1, Contradiction,
                                 "predicate-contradiction")


# -- correction-audn-v1 --------------------------------------------------------------------------

class Invalidation(BaseModel):
    neighbour: int = Field(description="Number of the existing correction the new one invalidates.")
    link: ConflictLink = Field(
        description="contradicts: they conflict; supersedes: the new one is a refined replacement.")


class AUDNVerdict(BaseModel):
    """ADD / UPDATE / DELETE / NOOP for a new correction, against numbered existing ones."""

    action: CorrectionAction = Field(
        description="add: new rule; reinforce: restates an existing one (UPDATE); invalidate: the new "
                    "rule replaces the ones in `invalidate` (DELETE); noop: nothing new.")
    target: int | None = Field(None, description="For reinforce/noop: the number of the existing correction.")
    invalidate: list[Invalidation] = Field(default_factory=list, description="Existing corrections it invalidates.")
    reason: str = Field("", description="One short sentence.")


_AUDN_SYSTEM_V1 = """\
You maintain the rules an AI assistant learned from its user's corrections. A new correction \
arrives; numbered existing corrections are similar to it. Decide:
- reinforce (UPDATE): it restates existing correction `target`;
- noop: it adds nothing to existing correction `target`;
- invalidate (DELETE): it contradicts or supersedes the existing corrections listed in \
`invalidate`; the new one is stored and they stop applying;
- add: it is a new rule (it may still list corrections it invalidates).
Only use the numbers shown. Prefer add when unsure."""


def correction_audn_v1(candidate: Candidate, neighbours: Sequence[Neighbour]) -> Messages:
    lines = [f'New correction ({candidate.correction_type}): "{candidate.rule_text}"', "", "Existing corrections:"]
    lines += [f'{i}. "{n.rule_text}" (similarity {n.similarity:.2f}, reinforced {n.reinforcement_count}x)'
              for i, n in enumerate(neighbours, 1)]
    lines += ["", "What should happen to the new correction?"]
    return [{"role": "system", "content": _AUDN_SYSTEM_V1}, {"role": "user", "content": "\n".join(lines)}]


CORRECTION_AUDN = Prompt(CORRECTION_AUDN_V1, correction_audn_v1, AUDNVerdict, "correction-audn")


# -- cluster-label-v1 ----------------------------------------------------------------------------

class ClusterLabel(BaseModel):
    label: str = Field(description="A short name (2 to 6 words) for what the rules have in common.")


_LABEL_SYSTEM_V1 = """\
You name groups of rules an AI assistant learned from its user's corrections. Give a short label \
(2 to 6 words, no quotes, no trailing period) saying what the rules of the group have in common."""


def cluster_label_v1(rule_texts: Sequence[str]) -> Messages:
    user = "Rules:\n" + "\n".join(f"- {t}" for t in rule_texts) + "\n\nName this group."
    return [{"role": "system", "content": _LABEL_SYSTEM_V1}, {"role": "user", "content": user}]


CLUSTER_LABEL = Prompt(CLUSTER_LABEL_V1, cluster_label_v1, ClusterLabel, "cluster-label")
