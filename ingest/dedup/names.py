"""Name normalization per entity type: the keys the exact and alias stages look up.

`name_key` is the exact-stage key (case, spacing, punctuation, titles, "Last, First", legal
suffixes). `alias_keys` are looser blocking keys (nicknames, initials, acronyms, place aliases,
organization cores, word bags); a shared alias key only makes two names candidates, the
stages decide.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from . import lexicon

_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script
_ACRONYM_SURFACE = re.compile(r"^(?:[A-Z]\.?){2,5}$|^(?:[A-Z]\.){2,5}$")


@lru_cache(maxsize=1 << 16)  # pure, and called for every candidate name
def fold(text: str) -> str:
    """Lower-case, accents stripped, apostrophes dropped ("O'Neil" -> "oneil")."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return re.sub(r"['\u2019`]", "", plain.casefold())


def normalize_name(name: str) -> str:
    """Type-agnostic form: folded, punctuation to spaces, single spaces."""
    return " ".join(_WORD.findall(fold(name)))


@dataclass(frozen=True)
class PersonName:
    first: str | None  # a single letter when only the initial was given
    last: str | None

    @property
    def is_initial(self) -> bool:
        return self.first is not None and len(self.first) == 1

    @property
    def is_full(self) -> bool:
        return self.first is not None and self.last is not None and not self.is_initial

    @property
    def text(self) -> str:
        return " ".join(part for part in (self.first, self.last) if part)


@lru_cache(maxsize=1 << 16)
def parse_person(name: str) -> PersonName:
    """Titles and suffixes dropped, "Last, First" reordered, middle names ignored."""
    raw = fold(name).strip()
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    if len(parts) == 2 and normalize_name(parts[1]) not in lexicon.PERSON_SUFFIXES:
        raw = f"{parts[1]} {parts[0]}"
    tokens = _WORD.findall(raw)
    while tokens and tokens[0] in lexicon.PERSON_TITLES:
        tokens = tokens[1:]
    while len(tokens) > 1 and tokens[-1] in lexicon.PERSON_SUFFIXES:
        tokens = tokens[:-1]
    if not tokens:
        return PersonName(None, None)
    return PersonName(tokens[0], tokens[-1] if len(tokens) > 1 else None)


def org_tokens(name: str) -> list[str]:
    """Organization words with abbreviations expanded ("Stark hldgs" -> stark holdings)."""
    tokens = [lexicon.ORG_ABBREVIATIONS.get(t, t) for t in _WORD.findall(fold(name).replace("&", " and "))]
    return tokens[1:] if len(tokens) > 1 and tokens[0] == "the" else tokens


def _strip_trailing(tokens: list[str], words: frozenset[str]) -> list[str]:
    out = list(tokens)
    while len(out) > 1 and out[-1] in words:
        out.pop()
    return out


def org_core(name: str) -> str:
    """Legal forms and descriptors removed: "Acme Holdings Ltd" -> "acme"."""
    tokens = _strip_trailing(org_tokens(name), lexicon.ORG_LEGAL_FORMS | lexicon.ORG_DESCRIPTORS)
    return "".join(tokens)


def org_descriptors(name: str) -> frozenset[str]:
    """ "Acme Holdings" -> {holdings}; two names with the same core but different descriptors
    ("Acme Holdings" / "Acme Systems") are kept apart."""
    return frozenset(t for t in org_tokens(name) if t in lexicon.ORG_DESCRIPTORS)


def place_qualifier(name: str) -> str | None:
    """What follows a place name's comma ("Paris, Texas" -> texas)."""
    parts = fold(name).split(",", 1)
    rest = " ".join(_WORD.findall(parts[1])) if len(parts) == 2 else ""
    return rest or None


def place_name(name: str) -> str:
    """Qualifier after a comma dropped, abbreviations expanded, alias table applied."""
    head = fold(name).split(",")[0]
    tokens = [lexicon.PLACE_ABBREVIATIONS.get(t, t) for t in _WORD.findall(head)]
    if len(tokens) > 1 and tokens[0] == "the" and " ".join(tokens) not in lexicon.PLACE_ALIASES.values():
        tokens = tokens[1:]
    text = " ".join(tokens)
    return lexicon.PLACE_ALIASES.get(text, lexicon.PLACE_ALIASES.get(text.replace(" ", ""), text))


def order_number(name: str) -> str:
    tokens = [t for t in _WORD.findall(fold(name)) if t not in lexicon.ORDER_WORDS]
    return "".join(tokens)


def _plain_tokens(name: str) -> list[str]:
    tokens = _WORD.findall(fold(name))
    return tokens[1:] if len(tokens) > 1 and tokens[0] in lexicon.ARTICLES else tokens


def name_key(name: str, entity_type: str) -> str:
    """The exact-stage key; equal keys of the same type name the same entity."""
    if entity_type == "person":
        return parse_person(name).text
    if entity_type == "organization":
        return "".join(_strip_trailing(org_tokens(name), lexicon.ORG_LEGAL_FORMS))
    if entity_type == "order":
        return order_number(name)
    if entity_type == "place":
        return "".join(_WORD.findall(fold(name).split(",")[0]))
    return "".join(_plain_tokens(name))


@lru_cache(maxsize=1 << 16)
def compact_name(name: str, entity_type: str) -> str:
    """The string the fuzzy stage compares (spaces kept for persons, where they delimit parts)."""
    if entity_type == "person":
        return parse_person(name).text
    if entity_type == "place":
        return place_name(name).replace(" ", "")
    return name_key(name, entity_type)


def is_acronym(name: str) -> bool:
    """ "NYC", "U.S.", "HCMC": 2-5 capitals, optionally dotted."""
    return bool(_ACRONYM_SURFACE.match(name.strip().replace(" ", "")))


def acronyms(name: str, entity_type: str) -> set[str]:
    """The acronyms a multi-word name is abbreviated to ("Vandelay Corp" -> vc)."""
    if entity_type == "person":
        return set()
    if entity_type == "organization":
        tokens = org_tokens(name)
        variants = [tokens, _strip_trailing(tokens, lexicon.ORG_LEGAL_FORMS)]
    elif entity_type == "place":
        variants = [place_name(name).split(), _WORD.findall(fold(name).split(",")[0])]
    else:
        variants = [_plain_tokens(name)]
    return {"".join(t[0] for t in v) for v in variants if len(v) >= 2}


@lru_cache(maxsize=1 << 16)
def _numbered_parts(name: str) -> tuple[str, ...]:
    compact = "".join(_WORD.findall(fold(name)))
    return tuple(n + (x if len(x) <= 2 else "") for n, x in re.findall(r"(\d+)([^\W\d_]*)", compact))


def variants_agree(a: str, b: str) -> bool:
    """False when the names mark different models or editions: numbers with a short suffix read
    off the compact form ("Pixel 8a" / "pixel8" differ, "WH-1000XM5" / "wh1000xm5" agree) and,
    when both are written in several words, the one- and two-letter words ("Xbox Series X" / "S")."""
    if _numbered_parts(a) != _numbered_parts(b):
        return False
    words_a, words_b = _plain_tokens(a), _plain_tokens(b)
    if len(words_a) > 1 and len(words_b) > 1:
        def short(words): return sorted(w for w in words if len(w) <= 2 and w.isalpha())
        return short(words_a) == short(words_b)
    return True


def stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def alias_keys(name: str, entity_type: str) -> set[str]:
    """Blocking keys for the alias stage, prefixed by kind ("nick:", "init:", "acr:", ...)."""
    keys: set[str] = set()
    if is_acronym(name):
        keys.add("acr:" + normalize_name(name).replace(" ", ""))
    if entity_type == "person":
        person = parse_person(name)
        if person.first and not person.is_initial:  # blocks a bare "Tom" with "Tom Becker" and "Tom Baker"
            keys.add(f"given:{person.first}")
        if person.first and person.last:
            keys.add(f"init:{person.first[0]} {person.last}")
            if not person.is_initial:
                keys.update(f"nick:{form} {person.last}" for form in lexicon.given_name_forms(person.first))
        return keys
    keys.update("acr:" + a for a in acronyms(name, entity_type))
    if entity_type == "organization":
        keys.add("core:" + org_core(name))
    elif entity_type == "place":
        keys.add("place:" + place_name(name).replace(" ", ""))
    elif entity_type in ("concept", "product"):
        keys.add("bag:" + " ".join(sorted(stem(t) for t in _plain_tokens(name))))
    return keys


@lru_cache(maxsize=1 << 16)
def is_low_information(name: str, entity_type: str | None = None) -> bool:
    """Too little text to match by spelling or meaning: acronyms, 1-3 letters, numbers and ids,
    and for persons a bare given name or an initial."""
    if is_acronym(name):
        return True
    if sum(ch.isalpha() for ch in fold(name)) <= 3:
        return True
    if entity_type == "order":
        return True
    rest = "".join(t for t in _WORD.findall(fold(name)) if t not in lexicon.ORDER_WORDS)
    digits = sum(ch.isdigit() for ch in rest)  # what is left when "order no." is removed
    if len(rest) - digits < 4 or digits > len(rest) - digits:  # an id, not a name: "#A-1001", "X9-2231"
        return True
    if entity_type == "person":
        return not parse_person(name).is_full
    return False
