"""The pure bi-temporal core: each rule on its own, a randomized check against a naive replay, and the dev set."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from kg.ingest.temporal import (
    FactEvent,
    FactPlan,
    FactRecord,
    Op,
    PredicateRegistry,
    apply,
    history,
    holds,
    plan,
    timeline,
    versions,
    withdrawn,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BASE = datetime(2024, 1, 1, tzinfo=timezone.utc)
NOW = datetime(2099, 1, 1, tzinfo=timezone.utc)


def at(day: float) -> datetime:
    return BASE + timedelta(days=day)


@dataclass
class Ledger:
    """An in-memory store for one registry: every record version and every event, per subject+predicate."""

    registry: PredicateRegistry = field(default_factory=PredicateRegistry)
    records: dict[tuple[str, str], list[FactRecord]] = field(default_factory=lambda: defaultdict(list))
    events: dict[tuple[str, str], list[FactEvent]] = field(default_factory=lambda: defaultdict(list))
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    clock: float = 100.0  # transaction time in days; advances with each event unless given

    def learn(self, op: Op, value: str, valid_day: float, *, predicate: str = "lives_in",
              subject: str = "user:ann", recorded_day: float | None = None) -> FactPlan:
        self.clock = recorded_day if recorded_day is not None else self.clock + 1
        event = FactEvent(id=f"ev{next(self.ids)}", op=op, subject=subject, predicate=predicate,
                          object_value=value, valid_from=at(valid_day), recorded_at=at(self.clock))
        return self.feed(event)

    def feed(self, event: FactEvent) -> FactPlan:
        scope = (event.subject, event.predicate)
        believed = [r for r in self.records[scope] if r.expired_at is None]
        step = plan(believed, event, self.registry, lambda: f"f{next(self.ids)}",
                    prior_events=self.events[scope])
        self.records[scope] = apply(self.records[scope], step)
        self.events[scope].append(event)
        return step

    def values(self, day: float | None = None, *, known_day: float | None = None,
               predicate: str = "lives_in", subject: str = "user:ann") -> list[str]:
        as_of = NOW if day is None else at(day)
        known_at = None if known_day is None else at(known_day)
        return [r.object_value for r in holds(self.records[(subject, predicate)], as_of, known_at)]

    def spans(self, predicate: str = "lives_in", subject: str = "user:ann") -> list[tuple[str, float, float | None]]:
        def day(t: datetime) -> float:
            return (t - BASE) / timedelta(days=1)
        return [(r.object_value, day(r.valid_from), None if r.valid_to is None else day(r.valid_to))
                for r in history(self.records[(subject, predicate)])]


# --- registry ---------------------------------------------------------------------------------

def test_registry_defaults_overrides_and_unknown() -> None:
    registry = PredicateRegistry({"likes": "one", "nickname": "one"})
    assert registry.cardinality("lives_in") == "one"
    assert registry.cardinality("timezone") == "one"
    assert registry.cardinality("speaks") == "many"
    assert registry.cardinality("never_heard_of") == "many"
    assert registry.cardinality("likes") == "one" and registry.is_functional("nickname")
    assert PredicateRegistry({"email": "many"}).cardinality("email") == "many"
    with pytest.raises(ValueError):
        PredicateRegistry({"likes": "several"})  # type: ignore[dict-item]


# --- functional rules -------------------------------------------------------------------------

def test_new_value_supersedes_holding_value_copy_on_write() -> None:
    ledger = Ledger()
    first = ledger.learn("assert", "Paris", 1)
    step = ledger.learn("assert", "Berlin", 10)
    assert first.decision == "added" and step.decision == "superseded"

    (paris_v1,) = first.create
    assert step.expire == (paris_v1.id,) and step.transaction_time == at(102)
    paris_v2, berlin = step.create
    assert (paris_v2.object_value, paris_v2.valid_to, paris_v2.lineage_id) == ("Paris", at(10), paris_v1.lineage_id)
    assert (berlin.valid_from, berlin.valid_to) == (at(10), None)
    assert berlin.supersedes_id == paris_v2.id
    assert [(link.record_id, link.supersedes_id) for link in step.supersede_links] == [(berlin.id, paris_v2.id)]

    assert ledger.spans() == [("Paris", 1, 10), ("Berlin", 10, None)]
    assert ledger.values(5) == ["Paris"] and ledger.values(10) == ["Berlin"] and ledger.values(0) == []
    # The old version is kept, expired, with its interval untouched.
    old = next(r for r in ledger.records[("user:ann", "lives_in")] if r.id == paris_v1.id)
    assert (old.valid_to, old.expired_at) == (None, at(102))
    assert [v.id for v in versions(ledger.records[("user:ann", "lives_in")], paris_v1.lineage_id)] == [
        paris_v1.id, paris_v2.id]


def test_same_value_is_a_reinforcement() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1)
    step = ledger.learn("assert", "Paris", 5)
    assert step.decision == "reinforced" and not step.expire and not step.create
    (change,) = step.reinforce
    assert (change.count, change.last_reinforced_at) == (1, at(102))
    ledger.learn("assert", "Paris", 7)
    (record,) = history(ledger.records[("user:ann", "lives_in")])
    assert record.reinforcement_count == 2 and record.last_reinforced_at == at(103)
    assert ledger.spans() == [("Paris", 1, None)]


def test_retract_of_holding_value_ends_it() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1)
    step = ledger.learn("retract", "Paris", 8)
    assert step.decision == "retracted" and len(step.expire) == 1
    assert ledger.spans() == [("Paris", 1, 8)]
    assert ledger.values(7) == ["Paris"] and ledger.values(8) == [] and ledger.values() == []


def test_retract_of_value_not_holding_is_a_noop() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1)
    step = ledger.learn("retract", "Berlin", 5)
    assert step.decision == "noop" and (step.expire, step.create, step.reinforce) == ((), (), ())
    assert ledger.learn("retract", "Paris", 0).decision == "noop"  # before Paris held
    assert ledger.spans() == [("Paris", 1, None)]


def test_backdated_fact_fills_only_its_earlier_interval() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Berlin", 10)
    step = ledger.learn("assert", "Paris", 2)  # older fact learned late
    assert step.decision == "added" and not step.expire
    assert ledger.spans() == [("Paris", 2, 10), ("Berlin", 10, None)]
    assert ledger.values() == ["Berlin"]


def test_out_of_order_event_lands_between_existing_change_points() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1)
    ledger.learn("assert", "Rome", 20)
    step = ledger.learn("assert", "Berlin", 10)
    assert step.decision == "superseded"
    assert ledger.spans() == [("Paris", 1, 10), ("Berlin", 10, 20), ("Rome", 20, None)]
    berlin = next(r for r in step.create if r.object_value == "Berlin")
    paris = next(r for r in step.create if r.object_value == "Paris")
    assert berlin.supersedes_id == paris.id
    assert ledger.values() == ["Rome"]


def test_earlier_reinforcement_and_noop_retract_become_change_points() -> None:
    # Neither left a trace in the records, so plan needs the events: this is why it takes prior_events.
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1)
    assert ledger.learn("assert", "Paris", 30).decision == "reinforced"
    assert ledger.learn("retract", "Berlin", 20).decision == "noop"
    assert ledger.learn("assert", "Berlin", 10).decision == "superseded"
    assert ledger.spans() == [("Paris", 1, 10), ("Berlin", 10, 20), ("Paris", 30, None)]
    assert ledger.values(25) == [] and ledger.values() == ["Paris"]


def test_known_at_sees_the_belief_of_that_moment() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1, recorded_day=100)
    ledger.learn("assert", "Berlin", 10, recorded_day=200)
    ledger.learn("assert", "Rome", 5, recorded_day=300)  # correction: moved to Rome earlier
    assert ledger.values(7, known_day=99) == []
    assert ledger.values(7, known_day=150) == ["Paris"]
    assert ledger.values(7, known_day=250) == ["Paris"]
    assert ledger.values(7, known_day=300) == ["Rome"]
    assert ledger.values(known_day=150) == ["Paris"] and ledger.values(known_day=250) == ["Berlin"]
    assert ledger.values(7) == ["Rome"]


# --- multi-valued rules -----------------------------------------------------------------------

def test_multi_valued_values_never_end_each_other() -> None:
    ledger = Ledger()
    assert ledger.learn("assert", "jazz", 1, predicate="likes").decision == "added"
    step = ledger.learn("assert", "tennis", 5, predicate="likes")
    assert step.decision == "added" and not step.expire and step.supersede_links == ()
    assert ledger.learn("assert", "jazz", 6, predicate="likes").decision == "reinforced"
    assert ledger.values(predicate="likes") == ["jazz", "tennis"]
    assert ledger.values(3, predicate="likes") == ["jazz"]


def test_multi_valued_retract_ends_only_that_value() -> None:
    ledger = Ledger()
    ledger.learn("assert", "jazz", 1, predicate="likes")
    ledger.learn("assert", "tennis", 2, predicate="likes")
    assert ledger.learn("retract", "jazz", 10, predicate="likes").decision == "retracted"
    assert ledger.learn("retract", "golf", 10, predicate="likes").decision == "noop"
    assert ledger.values(9, predicate="likes") == ["jazz", "tennis"]
    assert ledger.values(predicate="likes") == ["tennis"]
    ledger.learn("assert", "jazz", 12, predicate="likes")  # liked again: a new interval
    assert ledger.spans(predicate="likes") == [("jazz", 1, 10), ("tennis", 2, None), ("jazz", 12, None)]


# --- plan as a pure function ------------------------------------------------------------------

def test_plan_is_pure_deterministic_and_idempotent_on_redelivery() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1)
    scope = ("user:ann", "lives_in")
    believed = list(ledger.records[scope])
    prior = list(ledger.events[scope])
    event = FactEvent(id="evX", op="assert", subject="user:ann", predicate="lives_in",
                      object_value="Berlin", valid_from=at(5), recorded_at=at(500))

    def ids() -> Callable[[], str]:
        counter = itertools.count()
        return lambda: f"n{next(counter)}"

    first = plan(believed, event, ledger.registry, ids(), prior_events=prior)
    assert first == plan(believed, event, ledger.registry, ids(), prior_events=prior)
    assert believed == ledger.records[scope] and prior == ledger.events[scope]
    again = plan(believed, event, ledger.registry, ids(), prior_events=[*prior, event])
    assert again.decision == "noop" and not (again.expire or again.create or again.reinforce)


def test_plan_rejects_inconsistent_input() -> None:
    ledger = Ledger()
    ledger.learn("assert", "Paris", 1, recorded_day=100)
    scope = ("user:ann", "lives_in")
    records, prior = ledger.records[scope], ledger.events[scope]

    def event(**changes: object) -> FactEvent:
        fields = dict(id="evY", op="assert", subject="user:ann", predicate="lives_in",
                      object_value="Rome", valid_from=at(3), recorded_at=at(200))
        return FactEvent(**{**fields, **changes})  # type: ignore[arg-type]

    with pytest.raises(ValueError, match="backwards"):
        plan(records, event(recorded_at=at(50)), ledger.registry, str, prior_events=prior)
    with pytest.raises(ValueError, match="outside"):
        plan(records, event(predicate="email"), ledger.registry, str, prior_events=prior)
    with pytest.raises(ValueError, match="timezone"):
        event(valid_from=datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="op"):
        event(op="update")


# --- randomized: incremental plans == replay of the events known at known_at -------------------

def naive_answer(events: list[FactEvent], functional: bool, as_of: datetime, known_at: datetime | None) -> list[str]:
    """The spec, literally: events known at known_at, sorted by valid_from, applied up to as_of."""
    known = [e for e in events if known_at is None or e.recorded_at <= known_at]
    holding: set[str] = set()
    for e in sorted(known, key=lambda e: (e.valid_from, e.recorded_at)):
        if e.valid_from > as_of:
            break
        if e.op == "assert":
            holding = {e.object_value} if functional else holding | {e.object_value}
        else:
            holding.discard(e.object_value)
    return sorted(holding)


@pytest.mark.parametrize("predicate", ["lives_in", "likes"])
@pytest.mark.parametrize("tied", [False, True], ids=["distinct", "tied"])
def test_random_histories_match_naive_replay(predicate: str, tied: bool) -> None:
    rng = random.Random(7)
    functional = PredicateRegistry().is_functional(predicate)
    for _ in range(300):
        ledger = Ledger()
        size = rng.randint(1, 12)  # valid times in any learning order; "tied" repeats some of them
        days = [rng.randint(1, 8) for _ in range(size)] if tied else rng.sample(range(1, 40), size)
        for n, day in enumerate(days):
            op: Op = "retract" if rng.random() < 0.3 else "assert"
            ledger.learn(op, rng.choice("ABC"), day, predicate=predicate, recorded_day=100 + n)
        events = ledger.events[("user:ann", predicate)]
        records = ledger.records[("user:ann", predicate)]
        for known_day in [None, *range(99, 101 + len(days))]:
            known_at = None if known_day is None else at(known_day)
            believed = [r for r in records if r.believed_at(known_at)]
            lineages = Counter(r.lineage_id for r in believed)
            assert max(lineages.values(), default=1) == 1  # one believed version per lineage
            for day in range(0, 42):
                got = [r.object_value for r in holds(records, at(day), known_at)]
                assert got == naive_answer(events, functional, at(day), known_at), (days, known_day, day)


# --- the dev set -------------------------------------------------------------------------------

def test_dev_set_replay_is_exact_on_every_query_kind() -> None:
    path = DATA / "temporal_dev.json"
    if not path.exists():
        pytest.skip(f"dev set not found at {path} (expected ../shared/data/ beside the repo)")
    dataset = json.loads(path.read_text())

    def stamp(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    ledger = Ledger(registry=PredicateRegistry(dataset["predicates"]))
    for raw in dataset["events"]:  # file order is recorded_at order; transaction time = recorded_at
        ledger.feed(FactEvent(id=raw["id"], op=raw["op"], subject=raw["subject"], predicate=raw["predicate"],
                              object_value=raw["object"], valid_from=stamp(raw["valid_from"]),
                              recorded_at=stamp(raw["recorded_at"]), source=raw["source"]))
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: list[str] = []
    for query in dataset["queries"]:
        found = holds(ledger.records.get((query["subject"], query["predicate"]), []),
                      stamp(query["as_of"]), None if query["known_at"] is None else stamp(query["known_at"]))
        ok = [r.object_value for r in found] == sorted(query["expect"])
        total[query["kind"]] += 1
        right[query["kind"]] += ok
        wrong += [] if ok else [query["id"]]
    accuracy = {kind: right[kind] / total[kind] for kind in total}
    assert set(total) >= {"current", "past", "before_any", "known_at", "multi_valued", "after_retract",
                          "out_of_order"}
    assert accuracy == {kind: 1.0 for kind in total}, (accuracy, wrong[:10])



def _event(id: str, value: str, day: float, recorded: float, op: Op = "assert", **extra: Any) -> FactEvent:
    return FactEvent(id=id, op=op, subject="user:ann", predicate="lives_in", object_value=value,
                     valid_from=at(day), recorded_at=at(recorded), **extra)


def test_an_untrusted_event_is_held_against_a_trusted_value_until_confirmed() -> None:
    trusted = _event("a", "Lisbon", 1, 1)
    paris = _event("b", "Paris", 5, 5, trust="untrusted")
    spans, effects = timeline([trusted, paris], "one")
    assert [(s.object_value, s.valid_to) for s in spans] == [("Lisbon", None)] and effects["b"] == "held"
    retract = _event("c", "Lisbon", 6, 6, op="retract", trust="untrusted")
    assert timeline([trusted, paris, retract], "one")[1]["c"] == "held"  # nor retracts it
    confirm = _event("d", "Paris", 7, 7, confirms="b", op="retract")
    spans, effects = timeline([trusted, paris, confirm], "one")
    assert [(s.object_value, s.valid_to) for s in spans] == [("Lisbon", at(5)), ("Paris", None)]
    assert effects["d"] == effects["b"] == "superseded"
    alone = timeline([paris, _event("e", "Rome", 9, 9, trust="untrusted")], "one")[0]  # untrusted ends untrusted
    assert [s.object_value for s in alone] == ["Paris", "Rome"]
    later = timeline([paris, _event("f", "Oslo", 9, 9)], "one")[0]  # trusted ends untrusted
    assert [(s.object_value, s.opened_by.trust) for s in later] == [("Paris", "untrusted"), ("Oslo", "trusted")]


def test_a_withdrawal_withdrawn_takes_nothing_back() -> None:
    porto, lisbon = _event("a", "Porto", 1, 1), _event("b", "Lisbon", 5, 5)
    revert = _event("r1", "Lisbon", 6, 6, op="retract", withdraws="b")
    undo = _event("r2", "Lisbon", 7, 7, op="retract", withdraws="r1")
    assert withdrawn([porto, lisbon, revert]) == {"b"}
    assert [s.object_value for s in timeline([porto, lisbon, revert], "one")[0]] == ["Porto"]
    assert withdrawn([porto, lisbon, revert, undo]) == {"r1"}
    assert [s.object_value for s in timeline([porto, lisbon, revert, undo], "one")[0]] == ["Porto", "Lisbon"]
    rewind = _event("w", "", 8, 8, op="retract", withdraws="era_gone")  # an erase: its target is gone
    assert timeline([porto, rewind], "one")[1]["w"] == "noop"
