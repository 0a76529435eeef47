"""The dedup stages as pure functions, and the in-memory resolver on the dev set."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.dedup_core import bcubed_f1, load_mentions, pairwise_metrics, run, score
from kg.ingest.dedup import (
    DedupSettings,
    InMemoryCandidateSource,
    Mention,
    Resolver,
    compare,
    fuzzy_score,
    identifiers,
    is_low_information,
    name_key,
    normalize_name,
    profile,
)
from kg.ingest.dedup.entity import absorb, new_entity
from kg.ingest.dedup.model import MatchDecision
from kg.ingest.dedup.resolver import choose

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dedup_dev.jsonl"
SETTINGS = DedupSettings()


def entity_of(*mentions: Mention, entity_id: str = "e1"):
    """An entity built from mentions the way the resolver builds one."""
    profiles = [profile(m, SETTINGS) for m in mentions]
    entity = new_entity(entity_id, profiles[0])
    for prof in profiles[1:]:
        entity = absorb(entity, prof)
    return entity


def person(name: str, **attributes: str) -> Mention:
    return Mention(name, "person", attributes)


def verdict(mention: Mention, *known: Mention, settings: DedupSettings = SETTINGS) -> tuple[str, str]:
    decision = compare(profile(mention, settings), entity_of(*known), settings)
    return decision.stage, decision.verdict


# --- normalization -------------------------------------------------------------------------

def test_normalize_name_folds_case_accents_spacing_and_punctuation() -> None:
    assert normalize_name("  JACOB   Rodríguez-Smith ") == "jacob rodriguez smith"


@pytest.mark.parametrize(
    ("name", "entity_type", "key"),
    [
        ("Dr. Justin Watson", "person", "justin watson"),
        ("Watson, Justin", "person", "justin watson"),
        ("JUSTIN  watson", "person", "justin watson"),
        ("Oscorp Inc.", "organization", "oscorp"),
        ("Oscorp Incorporated", "organization", "oscorp"),
        ("Cogswell Ltd.", "organization", "cogswell"),
        ("Stark hldgs", "organization", "starkholdings"),
        ("Stark Holdings GmbH", "organization", "starkholdings"),
        ("order no. 51787", "order", "51787"),
        ("#51787", "order", "51787"),
        ("the iPhone 15 Pro", "product", "iphone15pro"),
        ("iPhone15Pro", "product", "iphone15pro"),
        ("Paris, France", "place", "paris"),
        ("gift card", "concept", "giftcard"),
    ],
)
def test_name_key(name: str, entity_type: str, key: str) -> None:
    assert name_key(name, entity_type) == key


def test_identifiers_are_normalized() -> None:
    ids = identifiers({"email": " Jane.Doe@Example.COM ", "phone": "+1 (555) 111-1981", "order_id": "ORD-0042",
                       "url": "https://www.acme.com/about", "country": "France"})
    assert ids == {"email": "jane.doe@example.com", "phone": "15551111981", "order_id": "0042", "domain": "acme.com"}


def test_identifiers_drop_values_that_are_not_identifiers() -> None:
    assert identifiers({"email": "not an email", "phone": "12"}) == {}


# --- low-information gate -------------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "entity_type"),
    [("NYC", "place"), ("U.S.", "place"), ("VC", "organization"), ("Sac", "place"), ("#82386", "order"),
     ("Order 82386", "order"), ("X9-2231", "product"), ("Jerry", "person"), ("G. Evans", "person")],
)
def test_low_information_names(name: str, entity_type: str) -> None:
    assert is_low_information(name, entity_type)


@pytest.mark.parametrize(
    ("name", "entity_type"),
    [("Gary Evans", "person"), ("iPhone15Pro", "product"), ("Acme Holdings", "organization"), ("Sacramento", "place")],
)
def test_informative_names(name: str, entity_type: str) -> None:
    assert not is_low_information(name, entity_type)


def test_low_information_names_never_match_by_spelling() -> None:
    assert verdict(Mention("MT", "organization"), Mention("MS", "organization"))[1] == "different"
    assert verdict(Mention("#82386", "order"), Mention("#82387", "order"))[1] == "different"


# --- exact and alias stages -----------------------------------------------------------------

def test_exact_stage_on_normalized_keys() -> None:
    assert verdict(person("Cook, Aaron"), person("Dr. Aaron  Cook")) == ("exact", "same")
    assert verdict(Mention("Vandelay Corp.", "organization"), Mention("VANDELAY CORPORATION", "organization")) == ("exact", "same")
    assert verdict(Mention("order no. 51787", "order"), Mention("#51787", "order")) == ("exact", "same")


def test_types_keep_one_word_apart() -> None:
    assert verdict(Mention("Apple", "organization"), Mention("apple", "concept")) == ("type", "different")


def test_alias_stage_nicknames_initials_and_emails() -> None:
    assert verdict(person("Bobby Henderson"), person("Robert Henderson")) == ("alias", "same")
    assert verdict(person("G. Evans"), person("Gary Evans")) == ("alias", "same")
    assert verdict(person("Gary Evans"), person("G. Evans")) == ("alias", "same")
    assert verdict(person("Ronald", email="ronald.gonzalez@hooli.xyz"), person("Ronald Gonzalez")) == ("exact", "same")
    assert verdict(person("John Williams"), person("Jason Williams"))[1] == "different"
    assert verdict(person("Jerry"), person("Jerry"))[1] == "ambiguous"  # a bare given name settles nothing


def test_initial_does_not_bridge_two_given_names() -> None:
    known = (person("J. Ward"), person("Jose Ward"))
    assert verdict(person("Jonathan Ward"), *known)[1] == "different"


def test_alias_stage_organizations_and_places() -> None:
    def org(n): return Mention(n, "organization")
    def place(n, **a): return Mention(n, "place", a)
    assert verdict(org("Acme"), org("Acme Holdings")) == ("alias", "same")
    assert verdict(org("SH"), org("Stark Holdings")) == ("alias", "same")
    assert verdict(org("Cogswell Limited"), org("CL")) == ("alias", "same")
    assert verdict(org("Acme Systems"), org("Acme Holdings"))[1] == "different"
    assert verdict(place("NYC"), place("New York City")) == ("alias", "same")
    assert verdict(place("München"), place("Munich")) == ("alias", "same")
    assert verdict(place("St. Petersburg"), place("Saint Petersburg")) == ("alias", "same")
    assert verdict(Mention("reset password", "concept"), Mention("password reset", "concept")) == ("alias", "same")


# --- fuzzy stage ----------------------------------------------------------------------------

def test_fuzzy_score() -> None:
    assert fuzzy_score("kindle scribe", "kindle scribe") == 1.0
    assert fuzzy_score("razerblade15", "rzaerblade15") > 0.85
    assert fuzzy_score("pixel", "surface") < 0.5


def test_fuzzy_stage_tolerates_typos() -> None:
    assert verdict(person("Jeffrey ook"), person("Jeffrey Cook")) == ("fuzzy", "same")
    assert verdict(person("Samuel Cvark"), person("Sam Clark")) == ("fuzzy", "same")
    assert verdict(Mention("Samsng Frame TV", "product"), Mention("samsung frame tv", "product")) == ("fuzzy", "same")


def test_fuzzy_stage_keeps_model_variants_apart() -> None:
    def product(n): return Mention(n, "product")
    assert verdict(product("Pixel 8a"), product("Pixel 8"))[1] == "different"
    assert verdict(product("Xbox Series S"), product("Xbox Series X"))[1] == "different"
    assert verdict(product("iPhone 14 Pro"), product("iPhone 15 Pro"))[1] == "different"


def test_fuzzy_band_is_ambiguous() -> None:
    settings = DedupSettings(fuzzy={"threshold": 0.99, "ambiguous_floor": 0.8})
    assert verdict(Mention("Sonyy WH-1000XM5", "product"), Mention("Sony WH-1000XM5", "product"),
                   settings=settings) == ("fuzzy", "ambiguous")


def test_fuzzy_stage_can_be_switched_off() -> None:
    settings = DedupSettings(fuzzy={"enabled": False})
    assert verdict(person("Jeffrey ook"), person("Jeffrey Cook"), settings=settings)[1] == "different"


# --- attribute stage ------------------------------------------------------------------------

def test_equal_identifier_merges_different_names() -> None:
    assert verdict(person("Tommy W.", phone="555-111-1981"), person("Thomas Walker", phone="(555) 111 1981")) == (
        "attribute", "same")
    assert verdict(Mention("AH", "organization", {"domain": "acme.com"}),
                   Mention("Acme", "organization", {"url": "http://www.acme.com"})) == ("attribute", "same")


def test_conflicting_identifier_vetoes_even_identical_names() -> None:
    assert verdict(person("Tyler Peterson", email="tyler.peterson@example.org"),
                   person("Tyler Peterson", email="tylr.peterson@globex.com")) == ("attribute", "different")
    assert verdict(Mention("Order 82386", "order", {"order_id": "82386"}),
                   Mention("Order 82387", "order", {"order_id": "82387"})) == ("attribute", "different")


def test_distinguishing_attribute_vetoes() -> None:
    assert verdict(Mention("Paris", "place", {"country": "US"}), Mention("Paris", "place", {"country": "France"})) == (
        "attribute", "different")
    assert verdict(Mention("Paris, Texas", "place"), Mention("Paris, France", "place")) == ("attribute", "different")


def test_embedding_stage_uses_the_similarity_it_is_given() -> None:
    mention, known = Mention("billing cycle", "concept"), entity_of(Mention("billing period", "concept"))
    assert compare(mention, known, SETTINGS, similarity=0.9).stage == "embedding"
    assert compare(mention, known, SETTINGS, similarity=0.75).verdict == "ambiguous"
    assert compare(mention, known, SETTINGS, similarity=0.3).verdict == "different"


def test_choose_prefers_stronger_stage_and_flags_ties() -> None:
    def same(stage, s): return MatchDecision(stage, s, "same")
    assert choose({"a": same("fuzzy", 0.9), "b": same("exact", 1.0)})[0] == "b"
    winner, _, ambiguous = choose({"a": same("alias", 0.8), "b": same("alias", 0.8)})
    assert winner is None and set(ambiguous) == {"a", "b"}


# --- resolver -------------------------------------------------------------------------------

def test_resolver_merges_and_keeps_aliases_and_attribute_history() -> None:
    source = InMemoryCandidateSource()
    resolver = Resolver(source)
    first = resolver.resolve(person("Thomas Walker", email="thomas.walker@globex.com", phone="555-111-1981"))
    second = resolver.resolve(person("Tommy", email="thomas.walker@globex.com", phone="555-999-0000"))
    third = resolver.resolve(person("T. Walker"))
    assert first.created and not second.created and second.decision.stage == "attribute"
    assert third.entity_id == first.entity_id
    entity = source.entities[first.entity_id]
    assert set(entity.aliases) == {"Thomas Walker", "Tommy", "T. Walker"}
    assert entity.attributes["phone"] == "555-999-0000"
    assert entity.history[0].old == "555-111-1981"
    assert entity.identifiers["phone"] == {"5551111981", "5559990000"}


def test_resolver_leaves_ambiguous_initials_unmerged() -> None:
    resolver = Resolver(InMemoryCandidateSource())
    resolver.resolve(person("John Williams"))
    resolver.resolve(person("Jason Williams"))
    outcome = resolver.resolve(person("J. Williams"))
    assert outcome.created and len(outcome.ambiguous_with) == 2


# --- metrics and the dev set ----------------------------------------------------------------

def test_pairwise_and_bcubed_metrics() -> None:
    gold = ["a", "a", "a", "b"]
    assert pairwise_metrics(["x", "x", "x", "y"], gold) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    metrics = pairwise_metrics(["x", "x", "y", "y"], gold)
    assert metrics["precision"] == 0.5 and metrics["recall"] == pytest.approx(1 / 3)
    assert bcubed_f1(gold, gold) == 1.0
    assert 0.0 < bcubed_f1(["x", "x", "y", "y"], gold) < 1.0


@pytest.mark.skipif(not DATA.exists(), reason=f"dev set not found at {DATA} (shared data folder absent)")
def test_in_memory_resolver_reaches_targets_on_dev_set() -> None:
    mentions, gold = load_mentions(DATA)
    resolutions, rate = run(mentions, DedupSettings())
    report = score(resolutions, gold, rate)
    assert report["pairwise_precision"] >= 0.98, report
    assert report["pairwise_f1"] >= 0.95, report
    assert report["bcubed_f1"] >= 0.95, report
