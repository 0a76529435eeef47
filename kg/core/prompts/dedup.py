"""The entity adjudication prompts: does an ambiguous mention name one of a few numbered known
entities? One mention (`adjudicate-v1`, answered by `Adjudication`) or every ambiguity of a batch
in one call (`adjudicate-batch-v1`, answered by `Rulings`). Asked by `kg.ingest.dedup.adjudication`;
the mention and the entities are read through the protocols below (the write path's dedup data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import Messages

ADJUDICATE_V1 = "adjudicate-v1"
ADJUDICATE_BATCH_V1 = "adjudicate-batch-v1"


class Named(Protocol):
    """What the prompts read of a mention and of a known entity alike."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def attributes(self) -> Mapping[str, str]: ...


class Mention(Named, Protocol):
    """What the prompt reads of a mention (`kg.ingest.dedup.model.Mention`): its name, type and
    attributes, and the sentence it stood in."""

    @property
    def context(self) -> str: ...


class Profile(Protocol):
    """What the prompt reads of a mention's profile (`kg.ingest.dedup.profile.Profile`)."""

    @property
    def mention(self) -> Mention: ...


class Entity(Named, Protocol):
    """What the prompt reads of a known entity (`kg.ingest.dedup.model.Entity`): its name, type and
    attributes, and the other names it goes by."""

    @property
    def aliases(self) -> Sequence[str]: ...

_SYSTEM_V1 = """\
You deduplicate the entities of an AI assistant's long-term memory. A new mention could be one of \
a few known entities, but the name alone does not settle it. Decide whether the mention refers to \
one of the numbered candidates, judging by names, aliases, type, attributes and the context \
sentence. Answer with the candidate's number, or null when it is a different entity. Say null \
when unsure: merging two different entities is worse than keeping one entity twice."""


class Adjudication(BaseModel):
    """Which numbered candidate the mention refers to; null when none of them."""

    candidate: int | None = Field(None, description="Number of the candidate the mention refers to, or null.")
    reason: str = Field("", description="One short sentence.")

    @field_validator("candidate")
    @classmethod
    def _known(cls, v: int | None, info: ValidationInfo) -> int | None:
        count = (info.context or {}).get("candidates")
        if v is not None and count is not None and not 1 <= v <= count:
            raise ValueError(f"candidate must be between 1 and {count}, or null")
        return v


def _describe(entity: Entity) -> str:
    parts = [f'name "{entity.name}"', f"type {entity.type}"]
    others = [a for a in entity.aliases if a != entity.name][:8]
    if others:
        parts.append("also called " + ", ".join(f'"{a}"' for a in others))
    if entity.attributes:
        parts.append("attributes " + ", ".join(f"{k}={v}" for k, v in sorted(entity.attributes.items())[:8]))
    return "; ".join(parts)


def adjudicate_v1(mention: Profile, candidates: Sequence[Entity]) -> Messages:
    m = mention.mention
    lines = [f'Mention: "{m.name}" (type {m.type})']
    if m.attributes:
        lines.append("Attributes: " + ", ".join(f"{k}={v}" for k, v in sorted(m.attributes.items())))
    if m.context:
        lines.append(f"Context: {m.context}")
    lines.append("\nCandidates:")
    lines += [f"{i}. {_describe(c)}" for i, c in enumerate(candidates, 1)]
    lines.append("\nWhich candidate is the mention, if any?")
    return [{"role": "system", "content": _SYSTEM_V1}, {"role": "user", "content": "\n".join(lines)}]


class Ruling(BaseModel):
    question: int = Field(description="Number of the question answered.")
    candidate: int | None = Field(None, description="Number of the candidate the mention refers to, or null.")


class Rulings(BaseModel):
    """One answer per numbered question."""

    answers: list[Ruling] = Field(default_factory=list)


_BATCH_SYSTEM_V1 = _SYSTEM_V1.replace("A new mention could", "Each numbered question is a new mention that could") + \
    " Answer every question, by its number."


def adjudicate_batch_v1(questions: Sequence[tuple[Profile, Sequence[Entity]]]) -> Messages:
    blocks = []
    for q, (mention, candidates) in enumerate(questions, 1):
        body = adjudicate_v1(mention, candidates)[1]["content"].replace("\nWhich candidate is the mention, if any?", "")
        blocks.append(f"Question {q}.\n{body}")
    user = "\n\n".join(blocks) + "\n\nFor each question: which candidate is the mention, if any?"
    return [{"role": "system", "content": _BATCH_SYSTEM_V1}, {"role": "user", "content": user}]



ADJUDICATE = Prompt(ADJUDICATE_V1, adjudicate_v1, Adjudication, "adjudication")
ADJUDICATE_BATCH = Prompt(ADJUDICATE_BATCH_V1, adjudicate_batch_v1, Rulings, "adjudication")
