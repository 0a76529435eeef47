"""Passes 2 and 3 of the three-pass enrichment of a closed session (`[memory.indexing] passes = 3`).

Pass 1 is the session summary (the session call, `session-v1`). `ThreePasses.enrich` then asks
pass 2 (`signals-v1`: the transcript and pass 1's frame) and pass 3 (`quality-v1`: passes 1 and 2
only, on `[memory.indexing] quality_service` when set) through the one LLM transport, so the usage
meter counts them with the session's other calls. Both answers are checked against the session's
turn ids (`kg.core.prompts.enrichment`): an id not in the session is re-asked once with the
error, and what the re-ask still cites wrongly is dropped, never stored. When pass 2 fails the
signals stay unknown; when pass 3 fails, pass 2's are kept and its own stay unknown.

Without an LLM, `OfflinePasses` fills what rules can tell (corrections and decisions by the offline
extractor's patterns; repeated instructions: a user turn saying again what an earlier one said) and
leaves the rest unknown (None), never guessed.
"""

from __future__ import annotations

import logging
import re

from kg.core.llm.asker import LLMAsker
from kg.core.llm.transport import LLMTransport, transport_for
from kg.core.models.recall import Summary
from kg.core.models.signals import CitedDecision, CitedSignal, SessionSignals
from kg.core.prompts import registry
from kg.core.prompts.enrichment import QualityAnswer, SignalsAnswer, cited_context
from kg.core.prompts.extraction import ChunkInput, ChunkTurn
from kg.core.settings.tree import Settings

from ..extraction.chunking import turn_tokens
from ..extraction.offline import extract_offline

log = logging.getLogger(__name__)
OFFLINE_SIGNALS = "signals-offline-v1"
_WORDS = re.compile(r"\w+")
MIN_REPEAT_WORDS = 3  # "ok", "thanks" again are not instructions
Enrichment = tuple[SessionSignals, float | None]  # the signals, and pass 3's quality score (None: keep pass 1's)


class ThreePasses:
    """Passes 2 and 3, each an `LLMAsker` on a transport (the same one unless `quality_service`)."""

    def __init__(self, signals: LLMTransport, quality: LLMTransport, token_budget: int) -> None:
        self.signals = LLMAsker(signals, registry.prompt("signals"))
        self.quality = LLMAsker(quality, registry.prompt("quality"), shared=quality is signals)
        self.token_budget = token_budget

    def made_by(self) -> dict[str, str | None]:
        return {"signals_prompt_version": self.signals.prompt_version, "signals_model": self.signals.model,
                "quality_prompt_version": self.quality.prompt_version, "quality_model": self.quality.model}

    async def enrich(self, session_id: str, turns: list[ChunkTurn], pass1: Summary) -> Enrichment | None:
        """The signals and pass 3's quality score, or None when pass 2 failed (nothing to store)."""
        ids = [t.id for t in sorted(turns, key=lambda t: t.idx)]
        context = cited_context(set(ids))
        found: SignalsAnswer | None = await self.signals.ask(
            session_id, transcript(turns, self.token_budget), pass1, context=context, max_tokens=None)
        if found is None:
            return None
        _dropped(session_id, self.signals.prompt_version, context)
        context = cited_context(set(ids))
        judged: QualityAnswer | None = await self.quality.ask(session_id, pass1, found, ids, context=context,
                                                              max_tokens=None)
        _dropped(session_id, self.quality.prompt_version, context)
        made = self.made_by()
        if judged is None:  # pass 3's lists and score stay unknown
            made.update(quality_prompt_version=None, quality_model=None)
            return SessionSignals(**found.model_dump(), **made), None
        return SessionSignals(**found.model_dump(), what_worked=judged.what_worked, what_failed=judged.what_failed,
                              **made), judged.quality

    async def aclose(self) -> None:
        await self.signals.aclose()
        await self.quality.aclose()


class OfflinePasses:
    """What rules can tell without an LLM; everything else stays unknown."""

    def made_by(self) -> dict[str, str | None]:
        return {"signals_prompt_version": OFFLINE_SIGNALS, "signals_model": "rules"}

    async def enrich(self, session_id: str, turns: list[ChunkTurn], pass1: Summary) -> Enrichment | None:
        ordered = sorted(turns, key=lambda t: t.idx)
        found = extract_offline(ChunkInput(session_id=session_id, turns=ordered))
        text = {t.id: t.text for t in ordered}
        corrections = [CitedSignal(quote=_excerpt(text[c.evidence_turn_ids[0]]), text=c.rule_text,
                                   turn_id=c.evidence_turn_ids[0]) for c in found.corrections if c.evidence_turn_ids]
        decisions = [CitedDecision(quote=_excerpt(text[d.evidence_turn_ids[0]]), text=d.text,
                                   turn_id=d.evidence_turn_ids[0]) for d in found.decisions if d.evidence_turn_ids]
        return SessionSignals(corrections=corrections, decisions=decisions,
                              repeated_instructions=repeated_instructions(ordered), **self.made_by()), None

    async def aclose(self) -> None:
        pass


Passes = ThreePasses | OfflinePasses


def repeated_instructions(turns: list[ChunkTurn]) -> list[CitedSignal]:
    """User turns with the same words as an earlier user turn (case and punctuation aside), each
    citing the repeat."""
    seen: dict[tuple[str, ...], ChunkTurn] = {}
    found: list[CitedSignal] = []
    for t in sorted(turns, key=lambda t: t.idx):
        words = tuple(w.casefold() for w in _WORDS.findall(t.text))
        if t.role != "user" or len(words) < MIN_REPEAT_WORDS:
            continue
        first = seen.setdefault(words, t)
        if first is not t:
            found.append(CitedSignal(quote=_excerpt(t.text), text=f"The user repeated the instruction of turn {first.idx}.",
                                     turn_id=t.id))
    return found


def transcript(turns: list[ChunkTurn], budget: int) -> list[ChunkTurn]:
    """The turns pass 2 reads: all of them when they fit the token budget, else the user's turns
    (the notes' selective attention), the latest ones that fit."""
    ordered = sorted(turns, key=lambda t: t.idx)
    if sum(turn_tokens(t) for t in ordered) <= budget:
        return ordered
    kept: list[ChunkTurn] = []
    used = 0
    for t in reversed([t for t in ordered if t.role == "user"]):
        used += turn_tokens(t)
        if used > budget and kept:
            break
        kept.append(t)
    return kept[::-1]


def stale(passes: Passes, summary: Summary) -> bool:
    """Whether `summary` lacks the signals these passes would make (a new summary has none)."""
    if summary.signals is None:
        return True
    made = summary.signals.model_dump()
    return any(made.get(k) != v for k, v in passes.made_by().items())


def passes_for(settings: Settings) -> Passes | None:
    """The passes `[memory.indexing]` asks for: None with `passes = 1`; the offline rules when
    extraction is offline. An unknown `quality_service` is an error naming it."""
    cfg = settings.memory.indexing
    if cfg.passes == 1:
        return None
    if cfg.quality_service is not None and cfg.quality_service not in settings.llm.services:
        known = ", ".join(sorted(settings.llm.services)) or "none configured"
        raise ValueError(f"memory.indexing.quality_service = {cfg.quality_service!r} is not a service in "
                         f"[llm.services] ({known})")
    signals = transport_for(settings)
    if signals is None:
        return OfflinePasses()
    quality = transport_for(settings, cfg.quality_service) if cfg.quality_service else signals
    return ThreePasses(signals, quality or signals, cfg.chunk_token_budget)


def _excerpt(text: str, limit: int = 200) -> str:
    return " ".join(text.split())[:limit]


def _dropped(session_id: str, version: str, context: dict[str, object]) -> None:
    if context["dropped"]:
        log.warning("%s of session %s cited %s turn(s) not in the session after its re-ask: dropped", version,
                    session_id, context["dropped"])
