"""Re-extraction's pure part: which event id a found statement is written under, and what goes stale."""

from __future__ import annotations

from kg.ingest.reconcile import Asserted, event_ids, stale


def asserted(event_id: str, statement: str | None = None, withdrawn: bool = False,
             corroborated: bool = False) -> Asserted:
    event = {"id": event_id, **({"statement": statement} if statement else {})}
    return Asserted("fact", event, withdrawn, corroborated)


def test_a_standing_statement_keeps_its_event_and_a_new_one_takes_its_key() -> None:
    prior = [asserted("fev_a")]  # written before statement keys were stored: the id is the key
    assert event_ids(["fev_a", "fev_b"], prior) == {"fev_a": "fev_a", "fev_b": "fev_b"}


def test_a_withdrawn_statement_found_again_gets_the_next_generation() -> None:
    prior = [asserted("fev_a", "fev_a", withdrawn=True)]
    assert event_ids(["fev_a"], prior) == {"fev_a": "fev_a.1"}
    prior.append(asserted("fev_a.1", "fev_a", withdrawn=True))
    assert event_ids(["fev_a"], prior) == {"fev_a": "fev_a.2"}
    prior.append(asserted("fev_a.2", "fev_a"))
    assert event_ids(["fev_a"], prior) == {"fev_a": "fev_a.2"}  # standing: a no-op


def test_stale_leaves_found_withdrawn_and_corroborated_statements_alone() -> None:
    prior = [asserted("a", "a"), asserted("b", "b"), asserted("c", "c", withdrawn=True),
             asserted("d", "d", corroborated=True)]
    assert [p.statement for p in stale(prior, ["a"])] == ["b"]
