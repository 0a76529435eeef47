"""Stage 5: an LLM settles what the deterministic stages left ambiguous, and nothing else.

Only mentions whose outcome is "ambiguous" (a fuzzy or embedding score inside its ambiguous band,
a lone initial fitting several people, a bare given name) reach it, and only when an LLM is
configured. The prompt is a versioned pure function paired with its response model (like the
extraction prompts); the answer names one numbered candidate or none. When the call fails the
mention stays ambiguous and `on_ambiguous` decides, as without an LLM.

The resolver is synchronous: `GraphResolver` first resolves a batch without answers to collect its
ambiguities, asks them all in one call (`settle`, `adjudicate-batch-v1`), then resolves again with
the answers. A plain callable adjudicator is still called per mention from a worker thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pydantic import BaseModel, Field, ValidationInfo, field_validator

from kg.ingest.dedup.model import Entity
from kg.ingest.dedup.profile import Profile
from kg.ingest.dedup.resolver import NONE_OF_THEM
from kg.ingest.extraction.extractor import Usage
from kg.ingest.extraction.llm import usage_of
from kg.core.config import LLMService, Settings
from kg.core.llm import LLMFailed, LLMTransport, service_for

log = logging.getLogger(__name__)

ADJUDICATE_V1 = "adjudicate-v1"
Messages = list[dict[str, str]]

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


ADJUDICATE_BATCH_V1 = "adjudicate-batch-v1"


class LLMAdjudicator:
    """`Adjudicate` through the LLM transport of one `[llm.services.<name>]` endpoint. The resolver
    asks through `settle`: every ambiguity of a batch in one call (see `GraphResolver`); a single
    call (`__call__`, from the resolver's worker thread) is bridged onto the transport's loop."""

    prompt_version = ADJUDICATE_V1

    def __init__(self, name: str, service: LLMService, max_candidates: int = 5,
                 transport: LLMTransport | None = None) -> None:
        self.backend, self.model, self.service = name, service.model, service
        self.max_candidates = max_candidates
        self.usage = Usage()  # answered calls and tokens, summed over this adjudicator's life
        self.transport = transport or LLMTransport(name, service)
        self._owns = transport is None

    def __call__(self, mention: Profile, candidates: Sequence[Entity]) -> str | None:
        shown = list(candidates)[: self.max_candidates]
        try:
            answer, calls = self.transport.ask_blocking(
                "adjudication", ADJUDICATE_V1, Adjudication, adjudicate_v1(mention, shown),
                context={"candidates": len(shown)}, max_tokens=512)
        except Exception as exc:  # noqa: BLE001 - any failure leaves the mention ambiguous
            log.warning("entity adjudication by %s:%s failed (%s); left ambiguous", self.backend, self.model,
                        getattr(exc, "reason", type(exc).__name__))
            self.usage = self.usage + usage_of(getattr(exc, "calls", []))
            return None
        self.usage = self.usage + usage_of(calls)
        return shown[answer.candidate - 1].id if answer.candidate else NONE_OF_THEM

    async def settle(self, questions: Sequence[tuple[Profile, Sequence[Entity]]]) -> list[str | None]:
        """Ids (or NONE_OF_THEM, or None: undecided) for every question, in one call."""
        shown = [(m, list(c)[: self.max_candidates]) for m, c in questions]
        if not shown:
            return []
        try:
            answer, calls = await self.transport.ask(
                "adjudication", ADJUDICATE_BATCH_V1, Rulings, adjudicate_batch_v1(shown),
                max_tokens=min(4096, 128 + 64 * len(shown)))
        except LLMFailed as failed:
            log.warning("entity adjudication by %s:%s failed (%s); left ambiguous", self.backend, self.model,
                        failed.reason)
            self.usage = self.usage + usage_of(failed.calls)
            return [None] * len(shown)
        self.usage = self.usage + usage_of(calls)
        out: list[str | None] = [None] * len(shown)
        for r in answer.answers:
            if 1 <= r.question <= len(shown):
                cands = shown[r.question - 1][1]
                if r.candidate is None:
                    out[r.question - 1] = NONE_OF_THEM
                elif 1 <= r.candidate <= len(cands):
                    out[r.question - 1] = cands[r.candidate - 1].id
        return out

    async def aclose(self) -> None:
        if self._owns:
            await self.transport.aclose()


def adjudicator_for(settings: Settings) -> LLMAdjudicator | None:
    """Stage 5 when an LLM is configured: `[memory.entity_deduplication.adjudication] service`, else
    the `[memory.indexing] backend` when it names a service (or is "auto" with ANTHROPIC_API_KEY set)."""
    stage = settings.memory.entity_deduplication.adjudication
    if not stage.enabled:
        return None
    services = settings.llm.services
    name = stage.service or settings.memory.indexing.backend
    if name in services:
        return LLMAdjudicator(name, services[name], stage.max_candidates)
    if stage.service is not None:
        raise ValueError(f"[memory.entity_deduplication.adjudication] service {name!r} is not in [llm.services]")
    found = service_for(settings) if name == "auto" else None  # the "auto" rule of extraction
    return LLMAdjudicator(found[0], found[1], stage.max_candidates) if found else None
