"""`[memory.entity_deduplication]`: which stages run and where their thresholds sit."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from kg.core.settings.base import Section


class _Section(Section):
    model_config = ConfigDict(frozen=True)


class ExactStage(_Section):
    enabled: bool = True


class AliasStage(_Section):
    """Lookups through tables and abbreviations rather than spelling."""

    enabled: bool = True
    nicknames: bool = True  # Bob ~ Robert
    initials: bool = True  # "G. Evans" ~ Gary Evans, when only one such candidate exists
    # "Gary Evans" joining an entity known only as "G. Evans": on by default; the initial may
    # belong to someone not yet seen, so this is the alias rule most likely to be wrong.
    full_name_to_initial: bool = True
    acronyms: bool = True  # "VC" ~ Vandelay Corp, "NYC" ~ New York City
    org_cores: bool = True  # "Acme" ~ Acme Holdings
    place_aliases: bool = True  # Philly ~ Philadelphia, München ~ Munich
    word_bags: bool = True  # "password reset" ~ "reset password"
    names_from_email: bool = True  # "Ronald" + ronald.gonzalez@... is Ronald Gonzalez


class FuzzyStage(_Section):
    enabled: bool = True
    threshold: float = Field(0.86, ge=0.0, le=1.0)
    ambiguous_floor: float = Field(0.78, ge=0.0, le=1.0)  # [floor, threshold) -> "ambiguous"
    # Persons: the one misspelled part (given or family name) must be at least this similar.
    part_threshold: float = Field(0.75, ge=0.0, le=1.0)
    limit: int = Field(10, ge=1)  # candidates fetched per mention


class EmbeddingStage(_Section):
    """Runs only when the resolver is given an embedder (in Neo4j: the entity vector index)."""

    enabled: bool = True
    threshold: float = Field(0.8, ge=-1.0, le=1.0)
    ambiguous_floor: float = Field(0.7, ge=-1.0, le=1.0)
    k: int = Field(5, ge=1)
    include_context: bool = False  # embed "name: context" instead of the name alone
    types: tuple[str, ...] = ("concept", "place", "product")


class AttributeStage(_Section):
    enabled: bool = True
    identifying: tuple[str, ...] = ("email", "phone", "order_id", "domain", "url", "website", "speaker")
    # Never identify on their own, but differing values keep entities apart ("Paris", France/US).
    distinguishing: tuple[str, ...] = ("country",)
    phone_min_digits: int = Field(7, ge=4)


class AdjudicationStage(_Section):
    """Stage 5: an LLM settles ambiguous outcomes (only those), when one is configured."""

    enabled: bool = True
    service: str | None = None  # a name in [llm.services]; None: the [memory.indexing] backend's, if any
    max_candidates: int = Field(5, ge=1)  # shown to the model


class DedupSettings(_Section):
    """Entity dedup resolver; mounted at [memory.entity_deduplication]."""

    enabled: bool = True
    exact: ExactStage = ExactStage()
    alias: AliasStage = AliasStage()
    fuzzy: FuzzyStage = FuzzyStage()
    embedding: EmbeddingStage = EmbeddingStage()
    attributes: AttributeStage = AttributeStage()
    adjudication: AdjudicationStage = AdjudicationStage()
    # What the resolver does with an "ambiguous" outcome no adjudicator settled.
    on_ambiguous: Literal["create", "merge_best"] = "create"
    max_candidates: int = Field(50, ge=1)

    @model_validator(mode="after")
    def _bands_ordered(self) -> "DedupSettings":
        for name, stage in (("fuzzy", self.fuzzy), ("embedding", self.embedding)):
            if stage.ambiguous_floor > stage.threshold:
                raise ValueError(f"{name}.ambiguous_floor must not exceed {name}.threshold")
        return self
