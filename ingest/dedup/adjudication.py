"""Stage 5: an LLM settles what the deterministic stages left ambiguous, and nothing else.

Only mentions whose outcome is "ambiguous" (a fuzzy or embedding score inside its ambiguous band,
a lone initial fitting several people, a bare given name) reach it, and only when an LLM is
configured. The prompts (`adjudicate-v1`, `adjudicate-batch-v1`) are in `kg.core.prompts.dedup`;
the answer names one numbered candidate or none. When the call fails the
mention stays ambiguous and `on_ambiguous` decides, as without an LLM.

The resolver is synchronous: `GraphResolver` first resolves a batch without answers to collect its
ambiguities, asks them all in one call (`settle`, `adjudicate-batch-v1`), then resolves again with
the answers. A plain callable adjudicator is still called per mention from a worker thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kg.core.llm.transport import LLMFailed, LLMTransport, service_for
from kg.core.prompts import registry
from kg.core.settings.tree import LLMService, Settings

from ..extraction.extractor import Usage
from ..extraction.llm import usage_of
from .model import Entity
from .profile import Profile
from .resolver import NONE_OF_THEM

log = logging.getLogger(__name__)

ADJUDICATE = registry.prompt("adjudicate")  # one mention
ADJUDICATE_BATCH = registry.prompt("adjudicate-batch")  # every ambiguity of a batch


class LLMAdjudicator:
    """`Adjudicate` through the LLM transport of one `[llm.services.<name>]` endpoint. The resolver
    asks through `settle`: every ambiguity of a batch in one call (see `GraphResolver`); a single
    call (`__call__`, from the resolver's worker thread) is bridged onto the transport's loop."""

    prompt_version = ADJUDICATE.version

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
                ADJUDICATE.purpose, ADJUDICATE.version, ADJUDICATE.response_model, ADJUDICATE.build(mention, shown),
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
                ADJUDICATE_BATCH.purpose, ADJUDICATE_BATCH.version, ADJUDICATE_BATCH.response_model,
                ADJUDICATE_BATCH.build(shown),
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
