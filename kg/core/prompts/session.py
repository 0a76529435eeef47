"""The session call's prompt `session-v1` (`SESSION`): the memory items of a chunk (as
`extract-v1`) plus a summary of the chunk and the session's enrichment (`SessionAnswer`: summary,
topics, intent, outcome, complexity, quality). It is pass 1 of the three-pass enrichment
(`kg.core.prompts.enrichment`).
"""

from __future__ import annotations

from pydantic import Field

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import Messages
from kg.core.prompts.extraction import EXTRACT_SYSTEM_V1, ChunkInput, ExtractionResult, render_turns
from kg.core.prompts.summaries import SummaryDraft

SESSION_V1 = "session-v1"


class SessionAnswer(ExtractionResult):
    """The memory items of the turns, and a summary of them."""

    summary: SummaryDraft = Field(description="A summary of these turns and what kind of session it was.")


_SESSION_SYSTEM_V1 = EXTRACT_SYSTEM_V1 + """

Also write `summary`, so that a later search for "what did we discuss about X?" finds this \
session and a reader can tell what happened without reading the turns:
- text: a faithful summary in 3 to 8 sentences, past tense, naming the speakers, the subjects \
discussed, what was decided and what was left open. Keep concrete names, numbers and dates.
- topics: up to 10 short topic tags, most central first.
- entities: people, organizations, products and places that are named.
- primary_intent: what the user mainly wanted, as one short phrase.
- outcome: success, partial_success, failure, abandoned, or ongoing.
- decisions: decisions the participants agreed on, one sentence each.
- complexity (0 trivial .. 1 very involved) and quality (0 unhelpful .. 1 excellent assistance).
Small talk gets a short summary."""


def session_v1(chunk: ChunkInput) -> Messages:
    """Messages asking for one `SessionAnswer` for `chunk`."""
    part = ""
    if chunk.chunk_count > 1:
        part = (f" This is part {chunk.chunk_index + 1} of {chunk.chunk_count}; parts overlap by a few turns, so"
                " repeating an item seen in the overlap is fine. Summarize this part only.")
    user = (f"Conversation session {chunk.session_id}.{part}\n\n{render_turns(chunk)}\n\n"
            "Extract the memory items from these turns and summarize them.")
    return [{"role": "system", "content": _SESSION_SYSTEM_V1}, {"role": "user", "content": user}]


SESSION = Prompt(SESSION_V1, session_v1, SessionAnswer, "session")
