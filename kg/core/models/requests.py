"""The parameter lists that cross every layer, each defined once: a fact assertion (`remember`), a
fact query (`facts`), a relationship assertion (`relate`) and query (`relationships`), a correction
(`add_correction`) and a search (`search_turns`, `search_sessions`, `search_memories`, `recall`).
`K` (kg.core.vocabulary) is a search's `k` as a door declares it.

The facade's keyword methods (`AsyncMemory`, `AsyncClient`, and their synchronous twins) build one
with `Model.of(locals())`; the writers and the queries take it; HTTP takes the same model as its
request body and MCP its field types as tool arguments. A refused value is a `FieldError` naming the
field at the facade, a 422 naming it over HTTP, a tool error over MCP. What only the writer can judge
(a `recorded_at` ahead of the server's clock, a rule that normalizes to nothing) stays in the writer.
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from kg.core.models.corrections import CorrectionType
from kg.core.models.limits import MAX_CHARS, FieldError, QueryText, SessionId, Timestamp
from kg.core.models.turns import as_utc
from kg.core.vocabulary import Op, Source, Trust, check_k

Instant = Annotated[Timestamp, AfterValidator(as_utc)]
"""A timestamp, in UTC (without an offset it was UTC already)."""
Subject = Annotated[str, Field(min_length=1, max_length=MAX_CHARS["subject"])]
"""An entity's name: a fact's subject, either end of a relationship."""
Predicate = Annotated[str, Field(min_length=1, max_length=MAX_CHARS["predicate"])]
"""A fact's predicate, or a relationship's type."""
FactObject = Annotated[str, Field(min_length=1, max_length=MAX_CHARS["object"])]
EntityType = Annotated[str, Field(min_length=1, max_length=MAX_CHARS["subject_type"])]
EvidenceIds = Annotated[list[str], Field(max_length=1000)]
RuleText = Annotated[str, Field(max_length=4000)]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> Self:
        """From a call's arguments (`locals()` of a facade method): its fields only. A refused value
        raises `FieldError` naming the field, as the writers' own checks do."""
        try:
            return cls.model_validate({k: v for k, v in arguments.items() if k in cls.model_fields})
        except ValidationError as exc:
            first = exc.errors()[0]
            ctx = first.get("ctx") or {}
            if isinstance(ctx.get("error"), ValueError):  # a rule of ours: its own words
                message = str(ctx["error"])
            elif first["type"] == "string_too_long":  # as `check_text` says it
                message = f"at most {ctx['max_length']} characters, got {len(first['input'])}"
            else:
                message = first["msg"]
            raise FieldError(".".join(str(p) for p in first["loc"]) or "body", message) from None


class _Assertion(Request):
    """What a fact and a relationship assertion share."""

    subject: Subject
    valid_from: Instant | None = None
    recorded_at: Instant | None = None
    source: Source = "stated"
    op: Op = "assert"
    evidence_turn_ids: EvidenceIds = Field(default_factory=list)
    subject_type: EntityType = "other"
    trust: Trust = Field("trusted", description="untrusted: tool output, a web page, another agent's message; "
                         "it never ends or changes a trusted statement until confirmed")


class FactAssertion(_Assertion):
    """`remember`: `subject predicate object`, asserted or retracted from `valid_from`."""

    predicate: Predicate
    object: FactObject
    object_type: EntityType | None = None


class _PointInTime(Request):
    """What a query of facts or relationships at a point in time shares."""

    subject: Subject
    as_of: Instant | None = None
    known_at: Instant | None = None


class FactQuery(_PointInTime):
    """`facts`: what holds for `subject` at valid time `as_of`, as believed at `known_at`."""

    predicate: Annotated[str, Field(max_length=MAX_CHARS["predicate"])] | None = None
    include_superseded: bool = False


class FactHistoryQuery(Request):
    """`history`: every interval of the subject's facts, as believed at `known_at`."""

    subject: Subject
    predicate: Annotated[str, Field(max_length=MAX_CHARS["predicate"])] | None = None
    known_at: Instant | None = None
    include_expired: bool = False


class RelationshipAssertion(_Assertion):
    """`relate`: `subject -[type]-> object`, asserted or retracted from `valid_from`."""

    type: Predicate = Field(description="e.g. works_for (one-to-one), works_with (many)")
    object: Subject
    object_type: EntityType = "other"


class RelationshipQuery(_PointInTime):
    """`relationships`: the subject's edges (of `type`, or all) at `as_of`, as believed at `known_at`."""

    type: Annotated[str, Field(max_length=MAX_CHARS["predicate"])] | None = None
    include_ended: bool = False


class CorrectionReport(Request):
    """`add_correction`: the user corrected the agent in `session_id`."""

    session_id: SessionId
    rule_text: Annotated[str, Field(min_length=1, max_length=4000)]
    original_behavior: RuleText | None = None
    corrected_behavior: RuleText | None = None
    correction_type: CorrectionType = "preference"
    seen_at: Instant | None = None
    evidence_turn_ids: EvidenceIds = Field(default_factory=list)
    confidence: Annotated[float, Field(gt=0, le=1)] | None = None
    trust: Trust = "trusted"  # untrusted: never reinforces, graduates or invalidates a trusted correction


class SearchRequest(Request):
    """A search of any kind: `k` results for `query`, as at `as_of` (later turns hidden), asked at
    `now` (what "last month" or "two weeks ago" count back from; default `as_of`, else the present).
    The recipe is not part of it: the facade also takes a `Recipe` object, and names an unknown one
    itself."""

    query: QueryText
    k: Annotated[int, AfterValidator(check_k)] = 10
    as_of: Instant | None = None
    now: Instant | None = None
