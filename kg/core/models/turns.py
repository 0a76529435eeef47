"""The domain objects that cross the public API: messages in, sessions and turns out, search hits."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from kg.core.models.limits import MAX_CHARS, SessionId, Timestamp, UnicodeText, unicode_problem
from kg.core.vocabulary import Trust

Role = Literal["user", "assistant", "system", "tool"]
ROLES: tuple[str, ...] = ("user", "assistant", "system", "tool")


NAMESPACE_PATTERN = re.compile(r"[A-Za-z0-9_.:@\-]{1,200}")  # whole string: fullmatch
NAMESPACE_RULE = "1 to 200 characters of letters, digits and _ . : @ -, not '.' or '..'"


def valid_namespace(namespace: object) -> bool:
    """A URL path segment as it is ("." and ".." would be resolved away before the API saw them)."""
    return isinstance(namespace, str) and bool(NAMESPACE_PATTERN.fullmatch(namespace)) and namespace not in (".", "..")


def check_namespace(namespace: object, field: str = "namespace") -> str:
    """The one namespace rule of every door (Python, HTTP, MCP, CLI); ValueError naming the field and why."""
    if not isinstance(namespace, str) or not valid_namespace(namespace):
        shown = repr(namespace) if not isinstance(namespace, str) or len(namespace) <= 60 else \
            f"{namespace[:40]!r}... ({len(namespace)} characters)"
        raise ValueError(f"{field}: {shown} is not a valid namespace: {NAMESPACE_RULE}")
    return namespace


def as_utc(value: datetime) -> datetime:
    """Timezone-aware UTC; a naive timestamp is taken to be UTC already."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def instant(value: datetime | None) -> datetime | None:
    """`as_utc` of a time that may be absent."""
    return as_utc(value) if value is not None else None


def _not_blank(value: str, info: ValidationInfo) -> str:
    if not value.strip():
        raise ValueError(f"{info.field_name} is blank")
    if problem := unicode_problem(value):
        raise ValueError(problem)
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]
"""Text with something beside whitespace, and Unicode (no lone surrogate); refused naming its field."""


ATTACHMENTS_MAX = 16
ATTACHMENT_CAPTION_MAX_CHARS = 2000


class Attachment(BaseModel):
    """Something shared with a message (an image, a file, a link): what it is and what it shows.
    The caption is searchable: it is part of the turn's key (docs/turn-keys.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.+/\-]+$",
                      description="image, file, audio, link, a MIME type...")
    caption: NonBlank = Field(min_length=1, max_length=ATTACHMENT_CAPTION_MAX_CHARS)
    url: UnicodeText | None = Field(default=None, min_length=1, max_length=2048)



def attachment_columns(attachments: list[Attachment]) -> dict[str, list[str] | None]:
    """How attachments are stored on a Turn node (properties cannot hold maps): parallel lists,
    "" for a missing url; none at all for a turn without attachments."""
    if not attachments:
        return {"attachment_kinds": None, "attachment_captions": None, "attachment_urls": None}
    return {"attachment_kinds": [a.kind for a in attachments],
            "attachment_captions": [a.caption for a in attachments],
            "attachment_urls": [a.url or "" for a in attachments]}


def attachments_of(kinds: list[str] | None, captions: list[str] | None, urls: list[str] | None) -> list[Attachment]:
    """The inverse of `attachment_columns`."""
    if not kinds:
        return []
    return [Attachment(kind=k, caption=c, url=u or None)
            for k, c, u in zip(kinds, captions or [], urls or [""] * len(kinds), strict=True)]


class Message(BaseModel):
    """One message as an agent records it; `session_id` is optional (assigned by time gap)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    namespace: str
    role: Role
    text: NonBlank = Field(min_length=1)
    ts: Timestamp
    speaker: UnicodeText | None = Field(default=None, max_length=MAX_CHARS["speaker"])
    session_id: SessionId | None = None
    external_id: UnicodeText | None = Field(default=None, max_length=MAX_CHARS["external_id"])  # the caller's own message id
    attachments: list[Attachment] = Field(default_factory=list, max_length=ATTACHMENTS_MAX)
    # the message exactly as the caller's framework shaped it (a JSON string: tool calls, ids, parts), kept
    # with the turn and returned by `turns`, never searched; the framework doors read it back (kg/integrations/)
    verbatim: UnicodeText | None = Field(default=None, min_length=1)
    # untrusted: tool output, a web page, another agent's message (stored and searchable, marked;
    # what is extracted from it never changes a trusted statement until confirmed)
    trust: Trust = "trusted"

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str) -> str:
        if not valid_namespace(v):
            raise ValueError(NAMESPACE_RULE)
        return v

    @field_validator("ts")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        return as_utc(v)



class Turn(BaseModel):
    """One stored message of a session: `idx` is its place in the session, `id` its stable identity."""

    id: str
    namespace: str
    session_id: str
    idx: int
    role: Role
    speaker: str | None = None
    text: str
    ts: datetime
    external_id: str | None = None
    embedding_model: str | None = None
    attachments: list[Attachment] = Field(default_factory=list)
    verbatim: str | None = None  # `Message.verbatim`: returned by `turns` and `add_message`, not by search hits
    trust: Trust = "trusted"

    @model_validator(mode="before")
    @classmethod
    def _stored_attachments(cls, value: Any) -> Any:
        """Accepts the node's parallel lists (`attachment_columns`) in place of `attachments`, and a
        node's missing trust (only untrusted turns carry one)."""
        if isinstance(value, dict) and "trust" in value and value["trust"] is None:
            value = {k: v for k, v in value.items() if k != "trust"}
        if isinstance(value, dict) and "attachment_kinds" in value:
            value = dict(value)
            value["attachments"] = attachments_of(value.pop("attachment_kinds"), value.pop("attachment_captions", None),
                                                  value.pop("attachment_urls", None))
        return value


class Session(BaseModel):
    """A conversation's session: its time span, message count, status and what indexing it cost."""

    id: str
    namespace: str
    started_at: datetime
    ended_at: datetime
    message_count: int
    status: str
    llm_calls: int = 0  # what indexing and summarizing it cost, summed over every run
    input_tokens: int = 0
    output_tokens: int = 0


class SessionTurns(BaseModel):
    session: Session
    turns: list[Turn]


class IngestReport(BaseModel):
    """What an ingest did: counts, and the rejected lines with where and why."""

    received: int = 0
    written: int = 0  # new turns
    existing: int = 0  # already stored (idempotent re-ingest)
    sessions: int = 0  # distinct sessions the input touched
    truncated_for_embedding: int = 0
    # turns the fallback embedder embedded because the primary failed (docs/retrieval.md, "Embedding fallback")
    embedded_by_fallback: int = 0
    rejected: list[str] = Field(default_factory=list)

    def merge(self, other: "IngestReport") -> None:
        self.received += other.received
        self.written += other.written
        self.existing += other.existing
        self.truncated_for_embedding += other.truncated_for_embedding
        self.embedded_by_fallback += other.embedded_by_fallback
        self.rejected.extend(other.rejected)


EraseScope = Literal["session", "turn", "subject", "namespace"]


class Erasure(BaseModel):
    """The audit record an erase leaves: what scope, a SHA-256 of the target (never its text), when
    (server time), by whom (an API key's digest prefix, or "local"), how many nodes of each label
    (and relationships, as "RELATES_TO") were removed, and how many things the erase restored
    (`Fact` / `RELATES_TO`: versions the rewind recorded anew; `Correction`: ones holding again;
    `Entity`: entities rebuilt from the mentions left)."""

    id: str
    namespace: str
    scope: EraseScope
    target_hash: str
    erased_at: datetime
    by: str
    counts: dict[str, int]
    restored: dict[str, int] = Field(default_factory=dict)
