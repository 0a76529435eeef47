"""Limits on what a caller may send, shared by every door (HTTP, MCP, the CLI, `Memory`).

A refused value raises `FieldError`, a `ValueError` that names the field: HTTP answers it with a
422 whose detail names that field, MCP with a tool error, Python callers see the exception. The
limits stay well under Neo4j's index key size (about 8 kB per indexed value), so an overlong value
is refused here and never reaches the database as a 500.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Callable

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

from kg.core.vocabulary import K_DOC, K_MAX, K_MIN

K = Annotated[int, Field(ge=K_MIN, le=K_MAX, description=K_DOC)]  # `k` of a search, as a door declares it

# Longest accepted value per field, in characters.
MAX_CHARS: dict[str, int] = {
    "subject": 500,
    "predicate": 200,
    "object": 2000,
    "subject_type": 100,
    "object_type": 100,
    "session_id": 200,
    "external_id": 200,
    "speaker": 200,
    "event_id": 200,
    "evidence_turn_ids": 200,  # each id
    "query": 2000,  # what a search looks for
}

# A session id is a path segment of the routes (`/sessions/{session_id}`): nothing a URL would
# split, decode or normalise away, no control characters, no surrounding whitespace.
_UNROUTABLE = re.compile(r"[/\\?#%\x00-\x1f\x7f]")


class FieldError(ValueError):
    """A refused input value; `field` names it as the caller sent it (e.g. `recorded_at`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def unicode_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text, or None. JSON can spell a lone surrogate ("\\ud800"),
    which has no UTF-8 form: the hash of a turn's id and the database would both fail on it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"not Unicode text: a lone surrogate (U+{ord(value[exc.start]):04X}) at character {exc.start}"
    return None


def _refusing(problem_of: Callable[[str], str | None]) -> Callable[[str], str]:
    """A pydantic after-validator from a rule that names a value's problem (None: no problem)."""

    def check(value: str) -> str:
        problem = problem_of(value)
        if problem:
            raise ValueError(problem)
        return value

    return check


UnicodeText = Annotated[str, AfterValidator(_refusing(unicode_problem))]
"""A text field in a pydantic model that must be storable: no lone surrogates."""


def check_text(field: str, value: str | None, limit: int | None = None) -> None:
    """Refuse a string longer than its field's limit, or one that is not Unicode text."""
    if value is None:
        return
    problem = unicode_problem(value)
    if problem:
        raise FieldError(field, problem)
    most = limit if limit is not None else MAX_CHARS[field]
    if len(value) > most:
        raise FieldError(field, f"at most {most} characters, got {len(value)}")


def check_name(field: str, value: str) -> None:
    """An entity's name (a fact's subject, a relationship's end): something beside whitespace, within its limit."""
    if not value.strip():
        raise FieldError(field, "cannot be blank")
    check_text(field, value, MAX_CHARS["subject"])


def session_id_problem(value: str) -> str | None:
    """Why `value` cannot be a session id, or None when it can."""
    if not value:
        return "cannot be empty"
    if problem := unicode_problem(value):
        return problem
    if len(value) > MAX_CHARS["session_id"]:
        return f"at most {MAX_CHARS['session_id']} characters, got {len(value)}"
    if value != value.strip():
        return "cannot start or end with whitespace"
    if value in (".", "..") or _UNROUTABLE.search(value):
        return "cannot be '.' or '..' or contain '/', '\\', '?', '#', '%' or control characters (it is a URL path segment)"
    return None


def check_session_id(value: str | None, field: str = "session_id") -> None:
    if value is None:
        return
    problem = session_id_problem(value)
    if problem:
        raise FieldError(field, problem)


SessionId = Annotated[str, AfterValidator(_refusing(session_id_problem))]
"""A session id field in a pydantic model: the one rule, as a validation error on that field."""


QueryText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_CHARS["query"])]
"""What a search looks for, at every door (HTTP's `q`, MCP's `query`)."""


def check_recorded_at(recorded_at: datetime | None, max_skew_s: float, now: datetime | None = None) -> None:
    """Transaction time is the server's: a `recorded_at` later than its clock (plus the allowed
    skew) is refused. Earlier is allowed (imports backdate)."""
    if recorded_at is None:
        return
    now = now or datetime.now(timezone.utc)
    if recorded_at > now + timedelta(seconds=max_skew_s):
        raise FieldError("recorded_at", f"{recorded_at.isoformat()} is later than the server's clock "
                         f"({now.isoformat()}) plus {max_skew_s:g} s ([memory] max_clock_skew_s); "
                         "transaction time cannot be in the future")


def _not_a_number(value: Any) -> Any:
    # Epoch numbers are ambiguous (seconds or milliseconds?): only ISO 8601 text is accepted.
    if isinstance(value, (int, float)) and not isinstance(value, bool) or \
            isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+(\.\d*)?\s*", value):
        raise ValueError(f"a timestamp is {TIMESTAMP_RULE}")
    return value


# The instants a timestamp may name. Far outside them a value is a typo or a probe, and the margin
# keeps the write path's date arithmetic (a session's gap either side of a message) from overflowing.
EARLIEST = datetime(1000, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9000, 1, 1, tzinfo=timezone.utc)
TIMESTAMP_RULE = ("ISO 8601 text (e.g. 2025-05-01T12:00:00Z; without an offset: UTC) from "
                  f"{EARLIEST:%Y-%m-%d} to {LATEST:%Y-%m-%d}; epoch numbers are refused")


def _in_range(value: datetime) -> datetime:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    if not EARLIEST <= aware < LATEST:
        raise ValueError(f"{value.isoformat()} is out of range: a timestamp is {TIMESTAMP_RULE}")
    return value


def check_timestamp(field: str, value: datetime | None) -> None:
    """The `Timestamp` rule for a caller that did not come through a pydantic model."""
    if value is not None:
        try:
            _in_range(value)
        except ValueError as exc:
            raise FieldError(field, str(exc)) from None


Timestamp = Annotated[datetime, BeforeValidator(_not_a_number), AfterValidator(_in_range)]
"""A timestamp field: ISO 8601 text or a datetime; without an offset it is UTC."""


def check_relation(subject: str, relation: str, object: str, subject_type: str | None,
                   object_type: str | None, recorded_at: datetime | None, valid_from: datetime | None,
                   evidence_turn_ids: list[str], max_skew_s: float) -> None:
    """The rules a relationship shares with a fact (its `type` is a fact's `predicate`), for every
    writer and door: the same limits, the same clock."""
    # Both ends are entities, keyed by name in an index: the object is held to the subject's limit.
    check_name("subject", subject)
    check_name("object", object)
    for field, text in (("type", relation), ("subject_type", subject_type), ("object_type", object_type)):
        if text is not None and not text.strip():
            raise FieldError(field, "cannot be blank")
        check_text(field, text, MAX_CHARS["predicate"] if field == "type" else None)
    for turn_id in evidence_turn_ids:
        check_text("evidence_turn_ids", turn_id)
    check_timestamp("valid_from", valid_from)
    check_timestamp("recorded_at", recorded_at)
    check_recorded_at(recorded_at, max_skew_s)
