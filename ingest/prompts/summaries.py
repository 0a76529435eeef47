"""The summary prompts: turns (`summarize-v1`) or part summaries (`rollup-v1`) to chat messages,
answered by a `SummaryDraft`. The extraction backends run them
(`kg.ingest.extraction.llm.extractor_for(settings, prompt=...)`); the version is stored on every
summary. Closed sessions are summarized by the session call instead (`session-v1`).
"""

from __future__ import annotations

from kg.ingest.extraction.models import ChunkInput, ChunkTurn
from kg.ingest.summaries.models import Part, SummaryDraft
from kg.core.llm.transport import Messages
from kg.core.llm.asker import Prompt

SUMMARIZE_V1 = "summarize-v1"
ROLLUP_V1 = "rollup-v1"

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
