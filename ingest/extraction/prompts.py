"""Versioned extraction prompts: pure functions from a chunk to chat messages.

Each prompt is paired with the pydantic model of its answer in a `Prompt`. The version is
stored on everything the prompt produced, so reindexing can tell what is stale; change the
wording, bump the version (keep the old function while results made with it still matter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kg.ingest.extraction.models import ChunkInput, ChunkTurn, ExtractionResult

Messages = list[dict[str, str]]

EXTRACT_V1 = "extract-v1"

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


@dataclass(frozen=True)
class Prompt:
    version: str
    build: Callable[[ChunkInput], Messages]
    response_model: type[ExtractionResult]
    purpose: str = "extraction"  # what the usage meter records the calls under


EXTRACT = Prompt(EXTRACT_V1, extract_v1, ExtractionResult)  # the prompt extraction uses now
PROMPTS: dict[str, Prompt] = {EXTRACT.version: EXTRACT}
