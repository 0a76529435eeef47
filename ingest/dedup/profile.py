"""A mention reduced to what the stages compare: keys, identifiers, parsed names."""

from __future__ import annotations

from dataclasses import dataclass

from kg.core.settings.dedup import DedupSettings

from . import lexicon
from .identifiers import identifiers, name_from_email, qualifiers
from .model import Mention
from .names import alias_keys, is_low_information, name_key, parse_person, place_qualifier


@dataclass(frozen=True)
class Profile:
    mention: Mention
    name: str  # the name matched on: the surface form, or a fuller one read off an email
    key: str
    alias_keys: frozenset[str]
    identifiers: dict[str, str]
    qualifiers: dict[str, str]
    low_information: bool

    @property
    def type(self) -> str:
        return self.mention.type

    @property
    def lookup_keys(self) -> frozenset[str]:
        return frozenset({"key:" + self.key} | self.alias_keys) if self.key else self.alias_keys


def effective_name(mention: Mention, email: str | None) -> str:
    """A bare given name or an initial completed from a first.last email, when they agree.

    "Ronald" + ronald.gonzalez@x -> "Ronald Gonzalez"; "J. Perry" + jonathan.perry@x -> "Jonathan Perry".
    """
    if mention.type != "person" or not email:
        return mention.name
    from_email = name_from_email(email)
    person = parse_person(mention.name)
    if from_email is None or person.first is None:
        return mention.name
    first, last = from_email
    if person.last is None and lexicon.given_name_forms(person.first) & lexicon.given_name_forms(first):
        return f"{person.first} {last}"
    if person.is_initial and person.last == last and first.startswith(person.first):
        return f"{first} {last}"
    return mention.name


def _qualifiers(mention: Mention, settings: DedupSettings) -> dict[str, str]:
    found = qualifiers(mention.attributes, settings.attributes.distinguishing)
    within = place_qualifier(mention.name) if mention.type == "place" else None
    if within:  # "Paris, Texas": told apart from "Paris, France" like a country attribute would
        found["within"] = within
    return found


def profile(mention: Mention, settings: DedupSettings) -> Profile:
    ids = identifiers(mention.attributes, settings.attributes.identifying) if settings.attributes.enabled else {}
    if "phone" in ids and len(ids["phone"]) < settings.attributes.phone_min_digits:
        del ids["phone"]
    name = effective_name(mention, ids.get("email")) if settings.alias.names_from_email else mention.name
    keys = alias_keys(name, mention.type) if settings.alias.enabled else set()
    return Profile(
        mention=mention,
        name=name,
        key=name_key(name, mention.type),
        alias_keys=frozenset(keys),
        identifiers=ids,
        qualifiers=_qualifiers(mention, settings),
        low_information=is_low_information(name, mention.type),
    )
