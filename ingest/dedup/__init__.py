"""Entity deduplication: deterministic stages (pure) and a stream resolver over a candidate source."""

from kg.core.settings.dedup import DedupSettings

from .candidates import CandidateSource, InMemoryCandidateSource
from .identifiers import identifiers
from .model import Entity, MatchDecision, Mention, Resolution
from .names import is_low_information, name_key, normalize_name
from .profile import Profile, profile
from .resolver import Resolver, TextEmbedder
from .stages import compare, fuzzy_score

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
