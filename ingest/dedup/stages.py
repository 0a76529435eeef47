"""The deterministic stages: one mention against one candidate entity, no database.

Order of evidence: identifiers (equal -> same, conflicting -> never), then the name by exact key,
by alias (nickname, initial, acronym, place alias, organization core, word bag), by spelling
(fuzzy), and by meaning (embedding similarity handed in by the candidate source). What falls
in a stage's ambiguous band comes back "ambiguous" for an adjudicator to settle.
"""

from __future__ import annotations

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from kg.core.settings.dedup import DedupSettings

from . import lexicon
from .model import Entity, MatchDecision, Mention
from .names import (
    PersonName,
    acronyms,
    compact_name,
    is_acronym,
    is_low_information,
    normalize_name,
    org_core,
    org_descriptors,
    parse_person,
    variants_agree,
)
from .profile import Profile, profile

NO_MATCH = MatchDecision("none", 0.0, "different", "no stage matched")
# How sure each alias kind is: a nickname is near-certain, a lone initial is a guess.
ALIAS_SCORES: dict[str, float] = {"nickname": 0.95, "place": 0.95, "core": 0.9, "bag": 0.9, "acronym": 0.85, "initial": 0.8}


def fuzzy_score(a: str, b: str) -> float:
    """Normalized Indel similarity in [0, 1] ("jeffrey ook" / "jeffrey cook" -> 0.96)."""
    return fuzz.ratio(a, b) / 100.0


def attribute_decision(mention: Profile, candidate: Entity) -> MatchDecision | None:
    """Equal identifier -> same; an identifier or qualifier of the same kind that differs -> different."""
    for kind, value in mention.identifiers.items():
        if value in candidate.identifiers.get(kind, ()):
            return MatchDecision("attribute", 1.0, "same", f"{kind} equal")
    for kind in mention.identifiers:
        if candidate.identifiers.get(kind):
            return MatchDecision("attribute", 0.0, "different", f"{kind} conflicts")
    for kind, value in mention.qualifiers.items():
        known = candidate.qualifiers.get(kind)
        if known and value not in known:
            return MatchDecision("attribute", 0.0, "different", f"{kind} conflicts")
    return None


def _nickname_compatible(a: str, b: str) -> bool:
    return bool(lexicon.given_name_forms(a) & lexicon.given_name_forms(b))


def person_decision(name: str, candidate_names: tuple[str, ...], settings: DedupSettings) -> MatchDecision | None:
    """Name stages for persons: the structure (given name, family name, initial) matters."""
    mention = parse_person(name)
    if mention.first is None:
        return None
    others = [parse_person(n) for n in candidate_names]
    if mention.last is None:  # a bare given name says little: a repeat is left to someone else
        if any(o.first == mention.first and o.last is None for o in others):
            return MatchDecision("exact", 1.0, "ambiguous", "bare given name")
        if any(o.first == mention.first and o.is_full for o in others):  # "Tom" beside "Tom Becker"
            return MatchDecision("exact", 0.9, "ambiguous", "bare given name beside a full name")
        return None
    full = [o for o in others if o.is_full]
    if mention.is_initial:
        # "J. Ward" fits any J-something Ward; the resolver keeps it only if one entity fits.
        if settings.alias.enabled and settings.alias.initials and any(_initial_fits(mention, o) for o in others):
            return MatchDecision("alias", ALIAS_SCORES["initial"], "same", "initial and family name")
        return None
    if settings.exact.enabled and any(o.text == mention.text for o in full):
        return MatchDecision("exact", 1.0, "same", "name key equal")
    if settings.alias.enabled and settings.alias.nicknames:
        if any(o.last == mention.last and o.first is not None and _nickname_compatible(o.first, mention.first) for o in full):
            return MatchDecision("alias", ALIAS_SCORES["nickname"], "same", "nickname")
    if not full and settings.alias.enabled and settings.alias.initials and settings.alias.full_name_to_initial:
        if any(_initial_fits(o, mention) for o in others if o.is_initial):
            return MatchDecision("alias", ALIAS_SCORES["initial"], "same", "full name to initial")
    if settings.fuzzy.enabled and full:
        return _fuzzy_band(max(person_fuzzy_score(mention, o, settings.fuzzy.part_threshold) for o in full), settings)
    return None


def _initial_fits(initial: PersonName, full: PersonName) -> bool:
    return bool(initial.last == full.last and full.first and full.first.startswith(initial.first or "?"))


def _part_similarity(a: str, b: str) -> float:
    """Typo similarity of one name part; a transposition counts as one edit."""
    return OSA.normalized_similarity(a, b)


def person_fuzzy_score(a: PersonName, b: PersonName, part_threshold: float = 0.75) -> float:
    """Spelling similarity of two full names where only one part may be misspelled.

    "Jeffrey ook" ~ "Jeffrey Cook" (family name one edit off, given name equal); "John Williams"
    vs "Jason Williams" scores 0: the given names differ by more than a typo.
    """
    if not (a.first and a.last and b.first and b.last):
        return 0.0
    firsts_agree = a.first == b.first or _nickname_compatible(a.first, b.first)
    if firsts_agree and a.last == b.last:
        return 1.0
    if firsts_agree:
        part = _part_similarity(a.last, b.last)
    elif a.last == b.last and not lexicon.distinct_given_names(a.first, b.first):
        part = _part_similarity(a.first, b.first)
    else:
        return 0.0
    if part < part_threshold:
        return 0.0
    first = b.first if firsts_agree else a.first  # "Samuel Cvark" vs "Sam Clark": judge the typo only
    return OSA.normalized_similarity(f"{first} {a.last}", b.text)


def _fuzzy_band(score: float, settings: DedupSettings) -> MatchDecision | None:
    if score >= settings.fuzzy.threshold:
        return MatchDecision("fuzzy", score, "same", "similar spelling")
    if score >= settings.fuzzy.ambiguous_floor:
        return MatchDecision("fuzzy", score, "ambiguous", "spelling in the ambiguous band")
    return None


def _alias_decision(mention: Profile, candidate: Entity, settings: DedupSettings) -> MatchDecision | None:
    alias = settings.alias
    if not alias.enabled:
        return None
    kind_of = {"place": ("place", alias.place_aliases), "core": ("core", alias.org_cores), "bag": ("bag", alias.word_bags)}
    best: MatchDecision | None = None
    for key in mention.alias_keys & candidate.keys:
        prefix = key.split(":", 1)[0]
        if prefix == "core" and not _descriptors_compatible(mention.name, candidate.names):
            continue
        if prefix in kind_of and kind_of[prefix][1]:
            kind = kind_of[prefix][0]
            if best is None or ALIAS_SCORES[kind] > best.score:
                best = MatchDecision("alias", ALIAS_SCORES[kind], "same", f"{kind} alias")
    if best is None and alias.acronyms and any(_acronym_of(mention, n) for n in candidate.names):
        best = MatchDecision("alias", ALIAS_SCORES["acronym"], "same", "acronym")
    return best


def _descriptors_compatible(name: str, others: tuple[str, ...]) -> bool:
    """Every name of the candidate with the same core names no other kind of business."""
    core, mine = org_core(name), org_descriptors(name)
    for other in others:
        theirs = org_descriptors(other)
        if org_core(other) == core and not (mine <= theirs or theirs <= mine):
            return False
    return True


def _acronym_of(mention: Profile, other: str) -> bool:
    """One name is written as the other's initials ("SH" / "Stark Holdings")."""
    entity_type = mention.type
    if is_acronym(mention.name) and not is_acronym(other):
        return normalize_name(mention.name).replace(" ", "") in acronyms(other, entity_type)
    if is_acronym(other) and not is_acronym(mention.name):
        return normalize_name(other).replace(" ", "") in acronyms(mention.name, entity_type)
    return False


def name_similarity(mention: Profile, names: tuple[str, ...]) -> float:
    """Best fuzzy score against the names that carry enough information to compare."""
    mine = compact_name(mention.name, mention.type)
    scores = [
        fuzzy_score(mine, compact_name(n, mention.type)) for n in names if not is_low_information(n, mention.type)
    ]
    return max(scores, default=0.0)


def compare(
    mention: Profile | Mention,
    candidate: Entity,
    settings: DedupSettings | None = None,
    similarity: float | None = None,
) -> MatchDecision:
    """Run the stages in order and return the first verdict; `similarity` is the embedding
    cosine between the mention and the candidate when the source computed one."""
    settings = settings or DedupSettings()
    if isinstance(mention, Mention):
        mention = profile(mention, settings)
    if mention.type != candidate.type:
        return MatchDecision("type", 0.0, "different", "types differ")
    if settings.attributes.enabled:
        decision = attribute_decision(mention, candidate)
        if decision is not None:
            return decision
    if mention.type == "person":
        decision = person_decision(mention.name, candidate.names, settings)
        return decision or NO_MATCH
    if settings.exact.enabled and mention.key and "key:" + mention.key in candidate.keys:
        return MatchDecision("exact", 1.0, "same", "name key equal")
    decision = _alias_decision(mention, candidate, settings)
    if decision is not None:
        return decision
    if mention.low_information:
        return NO_MATCH
    comparable = tuple(n for n in candidate.names if variants_agree(mention.name, n))
    if not comparable:
        return MatchDecision("fuzzy", 0.0, "different", "model numbers or letters differ")
    fuzzy = _fuzzy_band(name_similarity(mention, comparable), settings) if settings.fuzzy.enabled else None
    if fuzzy is not None and fuzzy.verdict == "same":
        return fuzzy
    embedding = _embedding_band(mention, similarity, settings)
    if embedding is not None and embedding.verdict == "same":
        return embedding
    return fuzzy or embedding or NO_MATCH


def _embedding_band(mention: Profile, similarity: float | None, settings: DedupSettings) -> MatchDecision | None:
    stage = settings.embedding
    if similarity is None or not stage.enabled or mention.type not in stage.types:
        return None
    if similarity >= stage.threshold:
        return MatchDecision("embedding", similarity, "same", "similar meaning")
    if similarity >= stage.ambiguous_floor:
        return MatchDecision("embedding", similarity, "ambiguous", "meaning in the ambiguous band")
    return None
