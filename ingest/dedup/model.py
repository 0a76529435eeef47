"""Plain data the dedup stages pass around: mentions in, entities kept, decisions out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

EntityType = str  # person, organization, product, order, place, concept, ...
Stage = Literal["type", "attribute", "exact", "alias", "fuzzy", "embedding", "llm", "none"]
Verdict = Literal["same", "different", "ambiguous"]

# Which stage wins when candidates disagree: identifiers first, meaning last.
STAGE_RANK: dict[str, int] = {"attribute": 0, "exact": 1, "alias": 2, "fuzzy": 3, "embedding": 4}


@dataclass(frozen=True)
class Mention:
    """One surface mention of an entity, as extraction hands it over."""

    name: str
    type: EntityType
    attributes: dict[str, str] = field(default_factory=dict)
    context: str = ""


@dataclass(frozen=True)
class MatchDecision:
    stage: Stage
    score: float
    verdict: Verdict
    reason: str = ""


@dataclass(frozen=True)
class AttributeChange:
    """An attribute value replaced by a newer mention; the older value is kept here."""

    key: str
    old: str
    new: str


@dataclass(frozen=True)
class Entity:
    """A resolved entity: every surface form and identifier of its cluster counts for matching."""

    id: str
    type: EntityType
    name: str  # display name: the first full name seen
    aliases: tuple[str, ...] = ()  # surface forms as written
    names: tuple[str, ...] = ()  # names matched against (surface forms, plus names read off emails)
    keys: frozenset[str] = frozenset()  # exact and alias lookup keys of all names
    identifiers: dict[str, frozenset[str]] = field(default_factory=dict)  # kind -> normalized values
    qualifiers: dict[str, frozenset[str]] = field(default_factory=dict)  # e.g. country
    attributes: dict[str, str] = field(default_factory=dict)  # latest value per attribute
    history: tuple[AttributeChange, ...] = ()
    mentions: int = 0
    vectors: tuple[tuple[float, ...], ...] = ()  # one per embedded name


@dataclass(frozen=True)
class Resolution:
    """What the resolver did with one mention."""

    entity_id: str
    created: bool
    decision: MatchDecision | None = None  # the winning decision when merged
    ambiguous_with: tuple[str, ...] = ()  # candidates an adjudicator (LLM) should look at
