"""Entity deduplication: deterministic stages (pure) and a stream resolver over a candidate source."""

from ingest.dedup.candidates import CandidateSource, InMemoryCandidateSource
from ingest.dedup.identifiers import identifiers
from ingest.dedup.model import Entity, MatchDecision, Mention, Resolution
from ingest.dedup.names import is_low_information, name_key, normalize_name
from ingest.dedup.profile import Profile, profile
from ingest.dedup.resolver import Resolver, TextEmbedder
from services.dedup_settings import DedupSettings
from ingest.dedup.stages import compare, fuzzy_score

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
