"""Stage 5: an LLM settles what the deterministic stages left ambiguous, and nothing else.

Only mentions whose outcome is "ambiguous" (a fuzzy or embedding score inside its ambiguous band,
a lone initial fitting several people, a bare given name) reach it, and only when an LLM is
configured. The prompt is a versioned pure function paired with its response model (like the
extraction prompts); the answer names one numbered candidate or none. When the call fails the
mention stays ambiguous and `on_ambiguous` decides, as without an LLM.

The resolver is synchronous, so this uses the SDKs' synchronous clients; `GraphResolver` runs a
batch's resolution in a worker thread when an adjudicator is set, so the event loop stays free.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anthropic
import instructor
import openai
from pydantic import BaseModel, Field, ValidationInfo, field_validator

from ingest.dedup.model import Entity
from ingest.dedup.profile import Profile
from ingest.dedup.resolver import NONE_OF_THEM
from ingest.extraction.extractor import Usage
from kg.config import LLMService, Settings, api_key_from_env

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


class LLMAdjudicator:
    """`Adjudicate` through one `[llm.services.<name>]` endpoint (instructor, synchronous)."""

    prompt_version = ADJUDICATE_V1

    def __init__(self, name: str, service: LLMService, max_candidates: int = 5) -> None:
        self.backend, self.model, self.service = name, service.model, service
        self.max_candidates = max_candidates
        self.usage = Usage()  # answered calls and tokens, summed over this adjudicator's life
        key = service.api_key or api_key_from_env(service.provider)
        options: dict[str, Any] = {"api_key": key.get_secret_value() if key else "not-needed",
                                   "timeout": service.timeout_s, "max_retries": service.transport_retries}
        if service.base_url:
            options["base_url"] = service.base_url
        mode = instructor.Mode.TOOLS if service.mode == "tools" else instructor.Mode.JSON
        if service.provider == "anthropic":
            self._sdk: Any = anthropic.Anthropic(**options)
            self._client = instructor.from_anthropic(self._sdk, mode=mode)
        else:
            self._sdk = openai.OpenAI(**options)
            self._client = instructor.from_openai(self._sdk, mode=mode)

    def __call__(self, mention: Profile, candidates: Sequence[Entity]) -> str | None:
        shown = list(candidates)[: self.max_candidates]
        try:
            answer, completion = self._client.create_with_completion(
                model=self.model, max_tokens=min(self.service.max_tokens, 512), response_model=Adjudication,
                messages=adjudicate_v1(mention, shown), max_retries=self.service.max_retries,
                context={"candidates": len(shown)}, strict=False)
        except Exception as exc:  # noqa: BLE001 - any failure leaves the mention ambiguous
            log.warning("entity adjudication by %s:%s failed (%s); left ambiguous", self.backend, self.model,
                        type(exc).__name__)
            return None
        u = getattr(completion, "usage", None)
        self.usage = self.usage + Usage(1, int(getattr(u, "input_tokens", None) or getattr(u, "prompt_tokens", 0) or 0),
                                        int(getattr(u, "output_tokens", None) or getattr(u, "completion_tokens", 0) or 0))
        return shown[answer.candidate - 1].id if answer.candidate else NONE_OF_THEM

    async def aclose(self) -> None:
        self._sdk.close()


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
    if name == "auto" and api_key_from_env("anthropic") is not None:
        found = next(((n, s) for n, s in services.items() if s.provider == "anthropic"), ("anthropic", LLMService()))
        return LLMAdjudicator(found[0], found[1], stage.max_candidates)
    return None
