"""Batches of messages validated item by item, the one way every door (HTTP `POST /messages` and
`/sessions`, the MCP `add_messages` and `add_turns` tools) accepts turns: each item is `accepted`
or `rejected` with its errors, and the valid ones are stored."""

from __future__ import annotations

from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kg.core.models.limits import MAX_CHARS, SessionId, Timestamp
from kg.core.models.turns import ATTACHMENTS_MAX, Attachment, Message, Role
from kg.core.settings.tree import Settings
from kg.core.vocabulary import Trust


class MessageIn(BaseModel):
    """One message; `session_id` omitted: the namespace's current session, or a new one after the gap."""

    model_config = ConfigDict(extra="forbid")
    role: Role
    text: str = Field(min_length=1)
    ts: Timestamp
    speaker: str | None = Field(None, max_length=MAX_CHARS["speaker"])
    session_id: SessionId | None = None
    external_id: str | None = Field(None, max_length=MAX_CHARS["external_id"])
    attachments: list[Attachment] = Field(default_factory=list, max_length=ATTACHMENTS_MAX,
                                          description="What was shared with the message; captions are searchable.")
    verbatim: str | None = Field(None, min_length=1, description="The message as the caller's framework shaped it "
                                 "(e.g. JSON); stored with the turn and returned with it, never searched.")
    trust: Trust = Field("trusted", description="untrusted: tool output, a web page, another agent's message")


class ItemError(BaseModel):
    """Why an item was rejected: the field (as a path, e.g. `messages[2].ts`) and the message."""

    field: str
    message: str


class ItemResult(BaseModel):
    index: int
    status: Literal["accepted", "rejected"]
    errors: list[ItemError] = Field(default_factory=list)


class BatchResult(BaseModel):
    """HTTP: 200 every item accepted; 207 some rejected (the valid ones are stored); 422 none accepted."""

    received: int
    accepted: int
    rejected: int
    written: int  # new turns
    existing: int  # already stored (idempotent re-send)
    sessions: int
    items: list[ItemResult]


def field_name(loc: Sequence[Any]) -> str:
    """A pydantic location as a field path: ("body", "messages", 2, "ts") -> "messages[2].ts"."""
    parts = list(loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc)
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def validation_detail(errors: Sequence[Any], prefix: Sequence[Any] = ()) -> list[dict[str, str]]:
    detail = []
    for e in errors:
        message = e["msg"]
        if e.get("type") == "json_invalid":
            message = f"malformed JSON: {e.get('ctx', {}).get('error', 'cannot be parsed')} at character {e['loc'][-1]}"
            detail.append({"field": "body", "message": message})
            continue
        detail.append({"field": field_name([*prefix, *e["loc"]]), "message": message})
    return detail


def validate_items(settings: Settings, namespace: str, items: Sequence[Any], field: str,
                   session_id: str | None = None, key_trust: Trust = "trusted") -> tuple[list[Message], list[ItemResult]]:
    """The valid items as messages of `namespace` (and `session_id`), and every item's verdict; a
    caller whose key writes untrusted content (`key_trust`) stores untrusted messages only.
    ValueError: more than `[http] max_batch` items."""
    if len(items) > settings.http.max_batch:
        raise ValueError(f"{field}: at most {settings.http.max_batch} items per request ([http] max_batch)")
    messages, results = [], []
    for i, item in enumerate(items):
        errors: list[dict[str, str]] = []
        if not isinstance(item, dict):
            errors = [{"field": f"{field}[{i}]", "message": "must be a JSON object"}]
        elif "namespace" in item:
            errors = [{"field": f"{field}[{i}].namespace",
                       "message": "not allowed: the namespace is given for the whole batch"}]
        elif session_id is not None and item.get("session_id", session_id) != session_id:
            errors = [{"field": f"{field}[{i}].session_id", "message": "differs from the batch's session_id"}]
        elif key_trust == "untrusted" and item.get("trust", "untrusted") != "untrusted":
            errors = [{"field": f"{field}[{i}].trust", "message": "this API key writes untrusted content only"}]
        elif long := [k for k in ("text", "verbatim") if len(str(item.get(k) or "")) > settings.ingest.max_text_chars]:
            errors = [{"field": f"{field}[{i}].{long[0]}", "message": f"longer than {settings.ingest.max_text_chars} "
                       "characters ([ingest] max_text_chars)"}]
        else:
            data = {**item, "namespace": namespace} | ({"session_id": session_id} if session_id else {}) \
                | ({"trust": "untrusted"} if key_trust == "untrusted" else {})
            try:
                messages.append(Message.model_validate(data))
            except ValidationError as exc:
                errors = validation_detail(exc.errors(), (field, i))
        results.append(ItemResult(index=i, status="rejected" if errors else "accepted",
                                  errors=[ItemError(**e) for e in errors]))
    return messages, results
