"""The summary prompts: turns (`summarize-v1`) or part summaries (`rollup-v1`) to chat messages,
answered by a `SummaryDraft` (defined here, with `Part`: a summary of a run of turns, what a rollup
reads, dressed as a chunk by `parts_chunk`). The extraction backends run them
(`kg.ingest.extraction.llm.extractor_for(settings, prompt=...)`); the version is stored on every
summary. Closed sessions are summarized by the session call instead (`session-v1`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pydantic import BaseModel, Field, PrivateAttr, field_validator

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import Messages
from kg.core.models.recall import Outcome
from kg.core.prompts.extraction import ChunkInput, ChunkTurn

SUMMARIZE_V1 = "summarize-v1"
ROLLUP_V1 = "rollup-v1"

TEXT_MAX_CHARS = 4000


class SummaryDraft(BaseModel):
    """A summary of a conversation (or of summaries of its parts) and what kind of session it was."""

    text: str = Field(description="A faithful summary in a few sentences: what was discussed, decided and left open.")
    topics: list[str] = Field(default_factory=list, description="Up to 10 short topic tags, most central first.")
    entities: list[str] = Field(default_factory=list, description="People, organizations, products, places named.")
    primary_intent: str | None = Field(None, description="What the user mainly wanted, in one short phrase.")
    outcome: Outcome | None = Field(None, description="How the session ended for that intent.")
    decisions: list[str] = Field(default_factory=list, description="Decisions agreed on, one sentence each.")
    complexity: float | None = Field(None, ge=0, le=1, description="0 trivial .. 1 very involved.")
    quality: float | None = Field(None, ge=0, le=1, description="0 unhelpful .. 1 excellent assistance.")
    _early: EarlyVector | None = PrivateAttr(None)

    def attach(self, early: EarlyVector) -> None:
        """The embedding of this draft's text, started while the draft was being made."""
        self._early = early

    def early_vector(self, text: str, model: str) -> EarlyVector | None:
        """The attached vector if it stands for `text` by `model` (what the writer would embed; one made
        of quoted turns stands for any cut of the text), else None (an attached one is cancelled:
        nobody waits for it)."""
        early, self._early = self._early, None
        if early is None:
            return None
        if early.model == model and (early.quoted or early.text == text):
            return early
        early.vectors.cancel()
        return None

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        v = " ".join(v.split()) if "\n" not in v else v.strip()
        if not v:
            raise ValueError("the summary text must not be empty")
        return v[:TEXT_MAX_CHARS]

    @field_validator("topics", "entities", "decisions")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(x for x in (" ".join(s.split()) for s in v) if x))[:20]


@dataclass(frozen=True)
class EarlyVector:
    """A summary's vector begun before the summary was done (`SummaryDraft.attach`): the embedding of
    its text, or, for an extractive summary, the unit mean of the turns it quotes (`quoted`)."""

    text: str
    model: str  # the embedder's name
    vectors: asyncio.Future[list[list[float]]]
    quoted: tuple[str, ...] = ()  # the ids of the turns whose vectors made it (none: the text's embedding)


@dataclass(frozen=True)
class Part:
    """A summary of a run of turns, as input to a rollup."""

    id: str  # of the Summary node
    slot: str
    start: int  # turn indexes [start, end)
    end: int
    text: str
    topics: tuple[str, ...] = ()


_SYSTEM_V1 = """\
You maintain the long-term memory of an AI assistant. You summarize conversations so that a \
later search for "what did we discuss about X?" finds the right session, and a reader can tell \
what happened without reading the turns.

Write:
- text: a faithful summary in 3 to 8 sentences, past tense, naming the speakers, the subjects \
discussed, what was decided and what was left open. Keep concrete names, numbers and dates.
- topics: up to 10 short topic tags, most central first.
- entities: people, organizations, products and places that are named.
- primary_intent: what the user mainly wanted, as one short phrase.
- outcome: success, partial_success, failure, abandoned, or ongoing (the conversation is still open).
- decisions: decisions the participants agreed on, one sentence each.
- complexity (0 trivial .. 1 very involved) and quality (0 unhelpful .. 1 excellent assistance).

Use only what the input says. Small talk gets a short summary."""


def _render_turn(turn: ChunkTurn) -> str:
    who = turn.speaker or turn.role
    when = f" ({turn.ts:%Y-%m-%d %H:%M})" if turn.ts is not None else ""
    return f"[{turn.idx}] {who}{when}: {turn.text}"


def summarize_v1(chunk: ChunkInput) -> Messages:
    """Messages asking for one `SummaryDraft` of the turns of `chunk`."""
    user = (
        f"Conversation session {chunk.session_id}.\n\n"
        + "\n".join(_render_turn(t) for t in chunk.turns)
        + "\n\nSummarize this conversation."
    )
    return [{"role": "system", "content": _SYSTEM_V1}, {"role": "user", "content": user}]


def rollup_v1(chunk: ChunkInput) -> Messages:
    """Messages asking for one `SummaryDraft` of consecutive part summaries (as `chunk.turns`)."""
    parts = "\n\n".join(f"Turns {t.speaker}:\n{t.text}" for t in chunk.turns)
    user = (
        f"Conversation session {chunk.session_id} was long, so its parts were summarized one by one, "
        f"in order:\n\n{parts}\n\nSummarize the whole conversation from these part summaries."
    )
    return [{"role": "system", "content": _SYSTEM_V1}, {"role": "user", "content": user}]


def parts_chunk(session_id: str, namespace: str, parts: list[Part]) -> ChunkInput:
    """Part summaries dressed as the turns of a chunk, which is what the backends send."""
    turns = [ChunkTurn(id=p.slot, idx=i, role="system", speaker=f"{p.start}-{p.end - 1}", text=p.text)
             for i, p in enumerate(parts)]
    return ChunkInput(session_id=session_id, namespace=namespace, turns=turns)


SUMMARIZE = Prompt(SUMMARIZE_V1, summarize_v1, SummaryDraft, "summary")
ROLLUP = Prompt(ROLLUP_V1, rollup_v1, SummaryDraft, "rollup")
