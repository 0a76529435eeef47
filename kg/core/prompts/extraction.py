"""The extraction prompt `extract-v1` (`EXTRACT`): what extraction reads (`ChunkInput`, a run of
turns), the one structured answer it produces per chunk (`ExtractionResult`) and the messages that
ask for it. The session call (`session-v1`, `kg.core.prompts.session`) answers the same items.

`ExtractionResult` is the response model of the extraction prompts; the LLM backends validate
against it through instructor, the offline extractor builds it directly. When a chunk is known,
pass `chunk.validation_context()` as pydantic's validation context: evidence turn ids are then
checked against the chunk, so a hallucinated id is re-asked instead of stored.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from kg.core.llm.asker import Prompt
from kg.core.llm.transport import Messages
from kg.core.vocabulary import Trust

EntityType = Literal["person", "organization", "product", "order", "place", "concept", "event", "other"]
FactSource = Literal["stated", "observed", "inferred"]
CorrectionType = Literal["preference", "factual", "style", "process", "tool_usage"]

EXTRACT_V1 = "extract-v1"

QUOTE_MAX_CHARS = 300  # a supporting quote, not a copy of the turn
NAME_MAX_CHARS = 200
PREDICATE_MAX_CHARS = 64
TEXT_MAX_CHARS = 1000

_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
_SEPARATORS = re.compile(r"[\s\-./]+")


class ChunkTurn(BaseModel):
    """One turn as extraction sees it; also accepts a `(id, idx, role, speaker, text, ts)` tuple."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    idx: int = Field(ge=0)
    role: str = "user"
    speaker: str | None = None
    text: str
    ts: datetime | None = None
    trust: Trust = "trusted"  # what is read from untrusted turns never changes trusted statements

    @model_validator(mode="before")
    @classmethod
    def _from_tuple(cls, value: Any) -> Any:
        if isinstance(value, (tuple, list)):
            return dict(zip(("id", "idx", "role", "speaker", "text", "ts"), value, strict=True))
        return value


class ChunkInput(BaseModel):
    """A run of consecutive turns of one session, sent to an extractor as one request."""

    session_id: str
    namespace: str = "default"
    turns: list[ChunkTurn] = Field(min_length=1)
    chunk_index: int = Field(0, ge=0)
    chunk_count: int = Field(1, ge=1)

    def turn_ids(self) -> frozenset[str]:
        return frozenset(t.id for t in self.turns)

    def validation_context(self) -> dict[str, Any]:
        return {"turn_ids": self.turn_ids()}


def snake_case(text: str) -> str:
    """`"Lives In"` -> `"lives_in"`; leaves anything else for the validator to reject."""
    return _SEPARATORS.sub("_", text.strip()).strip("_").lower()


def _clean(value: str, what: str, max_chars: int) -> str:
    value = " ".join(value.split())
    if not value:
        raise ValueError(f"{what} must not be empty")
    if len(value) > max_chars:
        raise ValueError(f"{what} is {len(value)} characters; keep it under {max_chars}")
    return value


def _predicate(value: str, what: str) -> str:
    value = snake_case(value)
    if not _SNAKE.match(value) or len(value) > PREDICATE_MAX_CHARS:
        raise ValueError(f"{what} must be a short snake_case verb phrase like 'lives_in', got {value!r}")
    return value


def _evidence() -> Any:
    return Field(min_length=1, description="Ids of the turns that support this item, e.g. ['t3'].")


class _Evidenced(BaseModel):
    """Checks `evidence_turn_ids` (declared last in each model, so the LLM writes it last)."""

    model_config = ConfigDict(populate_by_name=True)

    @field_validator("evidence_turn_ids", check_fields=False)
    @classmethod
    def _known_turns(cls, ids: list[str], info: ValidationInfo) -> list[str]:
        ids = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
        if not ids:
            raise ValueError("at least one evidence turn id is required")
        known = (info.context or {}).get("turn_ids")
        if known is not None:
            unknown = [i for i in ids if i not in known]
            if unknown:
                sample = ", ".join(sorted(known)[:12])
                raise ValueError(f"evidence turn ids {unknown} are not in this chunk; use ids from: {sample}")
        return ids


class ExtractedEntity(_Evidenced):
    name: str = Field(description="Canonical name as written in the conversation.")
    type: EntityType = "other"
    attributes: dict[str, str] = Field(default_factory=dict, description="Stable properties, e.g. {'email': ...}.")
    aliases: list[str] = Field(default_factory=list, description="Other names used for the same thing.")
    evidence_turn_ids: list[str] = _evidence()

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _clean(v, "entity name", NAME_MAX_CHARS)

    @field_validator("attributes", mode="before")
    @classmethod
    def _attributes(cls, v: Any) -> Any:
        if isinstance(v, dict):  # models often emit numbers or booleans as attribute values
            return {str(k): v if isinstance(v, str) else str(v) for k, v in v.items() if v is not None}
        return v

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(a for a in (" ".join(x.split()) for x in v) if a))


class ExtractedFact(_Evidenced):
    subject: str = Field(description="Who or what the fact is about; the speaker's name for 'I'.")
    predicate: str = Field(description="snake_case relation, e.g. lives_in, works_at, prefers.")
    object: str
    valid_from: datetime | None = Field(None, description="ISO 8601 time the fact became true, if said.")
    source: FactSource = "stated"
    quote: str = Field("", description=f"Short verbatim supporting quote, at most {QUOTE_MAX_CHARS} characters.")
    retracts: bool = Field(False, description="True when the turn says this is no longer true.")
    evidence_turn_ids: list[str] = _evidence()

    @field_validator("subject", "object")
    @classmethod
    def _ends(cls, v: str, info: ValidationInfo) -> str:
        return _clean(v, f"fact {info.field_name}", NAME_MAX_CHARS)

    @field_validator("predicate")
    @classmethod
    def _pred(cls, v: str) -> str:
        return _predicate(v, "fact predicate")

    @field_validator("quote")
    @classmethod
    def _quote(cls, v: str) -> str:
        v = " ".join(v.split())
        if len(v) > QUOTE_MAX_CHARS:
            raise ValueError(f"quote is {len(v)} characters; quote at most {QUOTE_MAX_CHARS}")
        return v

    @field_validator("valid_from")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=timezone.utc) if v is not None and v.tzinfo is None else v


class ExtractedRelationship(_Evidenced):
    from_: str = Field(alias="from", description="Name of the source entity.")
    relation: str = Field(description="snake_case relation, e.g. married_to, ordered, part_of.")
    to: str = Field(description="Name of the target entity.")
    retracts: bool = Field(False, description="True when the turn says this relationship no longer holds.")
    evidence_turn_ids: list[str] = _evidence()

    @field_validator("from_", "to")
    @classmethod
    def _ends(cls, v: str) -> str:
        return _clean(v, "relationship end", NAME_MAX_CHARS)

    @field_validator("relation")
    @classmethod
    def _rel(cls, v: str) -> str:
        return _predicate(v, "relation")


class ExtractedCorrection(_Evidenced):
    original_behavior: str = Field(description="What the assistant did or said that the user corrected.")
    corrected_behavior: str = Field(description="What the user wants instead.")
    rule_text: str = Field(description="A reusable imperative rule, e.g. 'Use uv instead of pip.'")
    correction_type: CorrectionType
    evidence_turn_ids: list[str] = _evidence()

    @field_validator("original_behavior", "corrected_behavior", "rule_text")
    @classmethod
    def _text(cls, v: str, info: ValidationInfo) -> str:
        return _clean(v, info.field_name or "text", TEXT_MAX_CHARS)


class ExtractedDecision(_Evidenced):
    text: str = Field(description="The decision as one sentence.")
    evidence_turn_ids: list[str] = _evidence()

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        return _clean(v, "decision text", TEXT_MAX_CHARS)


class ExtractionResult(BaseModel):
    """Entities, facts, relationships, corrections and decisions found in a chunk of conversation turns.

    Every item cites the ids of the turns that support it. Leave a list empty when nothing fits.
    """

    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)
    relationships: list[ExtractedRelationship] = Field(default_factory=list)
    corrections: list[ExtractedCorrection] = Field(default_factory=list)
    decisions: list[ExtractedDecision] = Field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.entities or self.facts or self.relationships or self.corrections or self.decisions)


# -- extract-v1 ------------------------------------------------------------------------------------

EXTRACT_SYSTEM_V1 = """\
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
    return [{"role": "system", "content": EXTRACT_SYSTEM_V1}, {"role": "user", "content": user}]


EXTRACT = Prompt(EXTRACT_V1, extract_v1, ExtractionResult, "extraction")  # the prompt extraction uses now
