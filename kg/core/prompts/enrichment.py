"""Passes 2 and 3 of the three-pass enrichment (`[memory.indexing] passes = 3`).

Pass 1 is the session call (`session-v1`, `kg.core.prompts.session`): its summary is the
structure and narrative (summary, intent, topics, outcome, complexity). Pass 2 (`signals-v1`) reads
the transcript with pass 1's frame and records the detailed signals; pass 3 (`quality-v1`) reads
passes 1 and 2 only, not the transcript, so a smaller model can judge it
(`[memory.indexing] quality_service`).

Every item quotes before it claims and cites the id of its turn. With the session's turn ids as
validation context (`cited_context`), an answer citing an id that is not a turn of the session is
re-asked once with the error; what the re-ask still cites wrongly is dropped, never stored.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import Messages
from kg.core.models.recall import Summary
from kg.core.models.signals import CitedDecision, CitedSignal
from kg.core.prompts.extraction import ChunkInput, ChunkTurn, render_turns

SIGNALS_V1 = "signals-v1"
QUALITY_V1 = "quality-v1"


def cited_context(turn_ids: set[str] | frozenset[str]) -> dict[str, Any]:
    """The validation context of one ask: the session's turn ids, and what the check did (it is
    mutated across instructor's re-asks: `reasked`, and `dropped` items)."""
    return {"turn_ids": frozenset(turn_ids), "reasked": False, "dropped": 0}


class _Cited(BaseModel):
    """An answer whose list items cite turns: unknown ids are re-asked once, then dropped."""

    @model_validator(mode="before")
    @classmethod
    def _cited_turns(cls, data: Any, info: ValidationInfo) -> Any:
        context = info.context
        if not isinstance(data, dict) or not context or context.get("turn_ids") is None:
            return data
        known = context["turn_ids"]

        def cites_known(item: Any) -> bool:
            return not isinstance(item, dict) or str(item.get("turn_id", "")).strip() in known

        lists = {k: v for k, v in data.items() if isinstance(v, list)}
        unknown = sorted({str(i.get("turn_id")) for v in lists.values() for i in v if not cites_known(i)})
        if not unknown:
            return data
        if not context["reasked"]:
            context["reasked"] = True
            shown = ", ".join(sorted(known)[:40])
            raise ValueError(f"turn_id {', '.join(map(repr, unknown))} is not a turn of this session; "
                             f"cite only these ids: {shown}")
        kept = {k: [i for i in v if cites_known(i)] for k, v in lists.items()}
        context["dropped"] += sum(len(v) - len(kept[k]) for k, v in lists.items())
        return {**data, **kept}


class SignalsAnswer(_Cited):
    """The detailed signals of one conversation; each quotes and cites the turn where it happened."""

    decisions: list[CitedDecision] = Field(default_factory=list, description="Decisions made, with their rationale.")
    corrections: list[CitedSignal] = Field(
        default_factory=list, description="The user correcting the assistant: what was wrong, what is right.")
    frustration_signals: list[CitedSignal] = Field(
        default_factory=list, description="The user showing frustration, explicitly or implicitly.")
    repeated_instructions: list[CitedSignal] = Field(
        default_factory=list, description="Instructions the user had to give again; cite the repeat.")
    rules_expressed: list[CitedSignal] = Field(
        default_factory=list, description="Rules or standing preferences the user stated.")
    new_knowledge: list[CitedSignal] = Field(
        default_factory=list, description="Knowledge the session established, worth remembering.")


class QualityAnswer(_Cited):
    """A judgment of how the session went, from its narrative and its signals."""

    what_worked: list[CitedSignal] = Field(default_factory=list, description="What helped the user, each citing a turn.")
    what_failed: list[CitedSignal] = Field(default_factory=list, description="What went wrong, each citing a turn.")
    quality: float = Field(ge=0, le=1, description="0 unhelpful .. 1 excellent assistance.")


_CITE = """\
For every item: first copy a short verbatim `quote`, then state `text`, then give the `turn_id` of \
the turn it comes from. Use only turn ids shown to you. Leave a list empty when nothing fits; do \
not invent anything the conversation does not show."""

_SIGNALS_SYSTEM_V1 = f"""\
You review one conversation between a user and an AI assistant, after it ended, and record the \
signals that help the assistant do better next time. The frame of the session (what it was about \
and how it ended) is given after the transcript. Focus on the user's messages expressing intent, \
the moments where direction changes, errors and failures, and the final outcome; skim routine \
confirmations.

Record:
- decisions: what the participants decided, with the `rationale` the conversation gives.
- corrections: the user correcting the assistant (what was wrong, what is right).
- frustration_signals: the user showing frustration, explicit or implicit (curt replies, "again", \
"I already said").
- repeated_instructions: an instruction the user had already given earlier; cite the repeat.
- rules_expressed: rules or standing preferences the user stated ("always use uv").
- new_knowledge: facts, solutions or conclusions the session established.

{_CITE}"""

_QUALITY_SYSTEM_V1 = f"""\
You judge how well an AI assistant served a user in one conversation, from its frame (summary, \
intent, outcome) and the signals found in it. You do not see the transcript: quote the signal or \
frame your judgment rests on, and cite the turn id that signal cites.

Give:
- what_worked and what_failed: what helped the user and what did not.
- quality: 0 (unhelpful) .. 1 (excellent assistance), weighing the outcome, corrections, \
frustration and repeats.

{_CITE}"""


def frame(summary: Summary) -> str:
    """Pass 1's answer as the later passes read it."""
    shown = {"summary": summary.text, "primary_intent": summary.primary_intent, "topics": summary.topics,
             "outcome": summary.outcome, "complexity": summary.complexity, "decisions": summary.decisions}
    return json.dumps(shown, ensure_ascii=False)


def signals_v1(session_id: str, turns: list[ChunkTurn], pass1: Summary) -> Messages:
    """Messages asking for one `SignalsAnswer` of `turns` (the transcript first), given pass 1."""
    chunk = ChunkInput(session_id=session_id, turns=turns)
    user = (f"Conversation session {session_id}.\n\n<transcript>\n{render_turns(chunk)}\n</transcript>\n\n"
            f"<frame>\n{frame(pass1)}\n</frame>\n\nRecord the signals of this conversation.")
    return [{"role": "system", "content": _SIGNALS_SYSTEM_V1}, {"role": "user", "content": user}]


def quality_v1(session_id: str, pass1: Summary, pass2: SignalsAnswer, turn_ids: list[str]) -> Messages:
    """Messages asking for one `QualityAnswer` from passes 1 and 2 (not the transcript)."""
    user = (f"Conversation session {session_id}; its turn ids: {', '.join(turn_ids)}.\n\n"
            f"<frame>\n{frame(pass1)}\n</frame>\n\n<signals>\n{pass2.model_dump_json()}\n</signals>\n\n"
            "Judge how this session went.")
    return [{"role": "system", "content": _QUALITY_SYSTEM_V1}, {"role": "user", "content": user}]


SIGNALS = Prompt(SIGNALS_V1, signals_v1, SignalsAnswer, "signals")
QUALITY = Prompt(QUALITY_V1, quality_v1, QualityAnswer, "quality")
