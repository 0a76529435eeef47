"""The extraction prompts: a chunk of turns to chat messages.

- `extract-v1` (`EXTRACT`): the memory items of the chunk (`ExtractionResult`);
- `session-v1` (`SESSION`): the session call, the same items plus a summary of the chunk and the
  session's enrichment (`SessionAnswer`: summary, topics, intent, outcome, complexity, quality). It
  is pass 1 of the three-pass enrichment (`kg.ingest.prompts.enrichment`).
"""

from __future__ import annotations

from pydantic import Field

from kg.ingest.extraction.models import ChunkInput, ChunkTurn, ExtractionResult
from kg.ingest.summaries.models import SummaryDraft
from kg.core.llm.transport import Messages
from kg.core.llm.asker import Prompt

EXTRACT_V1 = "extract-v1"
SESSION_V1 = "session-v1"

_SYSTEM_V1 = """\
You maintain the long-term memory of an AI assistant. You read a chunk of one conversation and \
record what is worth remembering in later conversations.

Record:
- entities: people, organizations, products, orders, places, concepts and events that are \
named or clearly referred to. Use the most complete name as `name`, other spellings as \
`aliases`, stable properties (email, order number, role) as `attributes`.
- facts: durable statements about the user or the world, as subject / predicate / object. \
Use the speaker's name as the subject when they say "I" or "my". Predicates are snake_case \
verb phrases (lives_in, works_at, prefers, likes, ordered); for "my <attribute> is <value>" use \
the attribute itself (email, favorite_color). Set `valid_from` (ISO 8601) \
only when the conversation says when the fact became true ("I moved to Lisbon last week" -> \
the turn's timestamp). `source` is "stated" when a speaker says it, "observed" when it is \
shown by what happened, "inferred" when you conclude it. Set `retracts` when the speaker says \
the fact no longer holds ("I no longer work at Acme"). `quote` is a short verbatim excerpt.
- relationships: links between two entities (from, relation, to).
- corrections: the user correcting the assistant. Give what the assistant did, what the user \
wants instead, and a reusable imperative `rule_text` that would prevent the mistake next time \
("Use uv instead of pip for installs."). Classify as preference, factual, style, process or \
tool_usage.
- decisions: conclusions the participants agreed on ("We'll ship on Friday").

Rules:
- Cite the ids of the supporting turns in `evidence_turn_ids`; only use ids shown below.
- Do not invent anything that the turns do not support. Small talk yields nothing.
- Leave a list empty when nothing fits."""


def _render_turn(turn: ChunkTurn) -> str:
    attrs = [f'id="{turn.id}"', f'role="{turn.role}"']
    if turn.speaker:
        attrs.append(f'speaker="{turn.speaker}"')
    if turn.ts is not None:
        attrs.append(f'ts="{turn.ts.isoformat()}"')
    text = turn.text.replace("</turn>", "&lt;/turn>")
    return f"<turn {' '.join(attrs)}>\n{text}\n</turn>"


def render_turns(chunk: ChunkInput) -> str:
    return "\n".join(_render_turn(t) for t in chunk.turns)


def extract_v1(chunk: ChunkInput) -> Messages:
    """Messages asking for one `ExtractionResult` for `chunk`."""
    part = ""
    if chunk.chunk_count > 1:
        part = (
            f" This is part {chunk.chunk_index + 1} of {chunk.chunk_count}; parts overlap by a few"
            " turns, so repeating an item seen in the overlap is fine."
        )
    user = (
        f"Conversation session {chunk.session_id}.{part}\n\n"
        f"{render_turns(chunk)}\n\n"
        "Extract the memory items from these turns."
    )
    return [{"role": "system", "content": _SYSTEM_V1}, {"role": "user", "content": user}]


EXTRACT = Prompt(EXTRACT_V1, extract_v1, ExtractionResult, "extraction")  # the prompt extraction uses now


class SessionAnswer(ExtractionResult):
    """The memory items of the turns, and a summary of them."""

    summary: SummaryDraft = Field(description="A summary of these turns and what kind of session it was.")


_SESSION_SYSTEM_V1 = _SYSTEM_V1 + """

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
