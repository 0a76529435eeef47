"""Entity deduplication: deterministic stages (pure) and a stream resolver over a candidate source."""

from kg.ingest.dedup.candidates import CandidateSource, InMemoryCandidateSource
from kg.ingest.dedup.identifiers import identifiers
from kg.ingest.dedup.model import Entity, MatchDecision, Mention, Resolution
from kg.ingest.dedup.names import is_low_information, name_key, normalize_name
from kg.ingest.dedup.profile import Profile, profile
from kg.ingest.dedup.resolver import Resolver, TextEmbedder
from kg.core.settings.dedup import DedupSettings
from kg.ingest.dedup.stages import compare, fuzzy_score

__all__ = [
    "CandidateSource",
    "DedupSettings",
    "Entity",
    "InMemoryCandidateSource",
    "MatchDecision",
    "Mention",
    "Profile",
    "Resolution",
    "Resolver",
    "TextEmbedder",
    "compare",
    "fuzzy_score",
    "identifiers",
    "is_low_information",
    "name_key",
    "normalize_name",
    "profile",
]
