"""Relationship events from a seed, and their expected answers from a simple, independent reference.

The data set: people and organisations, one-to-one types (works_for, reports_to, married_to,
lives_with) and many-to-many ones (works_with, knows, friend_of). Each subject+type gets a short
history written out of valid-time order: new targets, repeats, backdated changes learned last,
retractions. Trap subjects hold edges of the same types to the same targets, written in between,
so a write that looked beyond its own subject+type would end them.

The reference shares no code with the product: what holds at `as_of`, as believed at `known_at`,
is a sweep over the events known by then (recorded_at <= known_at), in valid-time order (ties:
the later-learned acts last): a one-to-one assert replaces the target, a many-to-many one adds
it; a retraction removes its target if it holds.

    python -m bench.relationships_reference --seed 7 [--save FILE]
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ONE = ["works_for", "reports_to", "married_to", "lives_with"]
MANY = ["works_with", "knows", "friend_of"]
T0 = datetime(2020, 1, 1, tzinfo=timezone.utc)
RECORDED_T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _stamp(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


def expect(events: list[dict[str, Any]], cardinality: str, as_of: datetime | None,
           known_at: datetime | None) -> list[str]:
    """Targets holding at `as_of` (None: after every event) given the events known at `known_at`."""
    known = [e for e in events if known_at is None or _stamp(e["recorded_at"]) <= known_at]
    known.sort(key=lambda e: (_stamp(e["valid_from"]), _stamp(e["recorded_at"])))
    holding: list[str] = []
    for e in known:
        if as_of is not None and _stamp(e["valid_from"]) > as_of:
            break
        target = e["object"]
        if e["op"] == "retract":
            holding = [h for h in holding if h != target]
        elif cardinality == "one":
            holding = [target]
        elif target not in holding:
            holding.append(target)
    return sorted(holding)


def _history(rng: random.Random, cardinality: str, targets: list[str]) -> list[dict[str, Any]]:
    """One subject+type's events in the order they are learned: (op, object, valid day, tag)."""
    days = sorted(rng.sample(range(0, 1800), 6))
    steps: list[dict[str, Any]] = []
    picked = rng.sample(targets, 4)
    for i, d in enumerate(days[:4]):
        steps.append({"op": "assert", "object": picked[i if cardinality == "one" else i % 3], "day": d, "tag": ""})
    if rng.random() < 0.6:  # a repeat of the first target later on (a reinforcement or a return)
        steps.append({"op": "assert", "object": picked[0], "day": days[4], "tag": ""})
    if rng.random() < 0.7:  # a retraction of a target that holds then
        held = steps[-1]["object"] if cardinality == "one" else rng.choice([s["object"] for s in steps])
        steps.append({"op": "retract", "object": held, "day": days[5], "tag": "retraction"})
    order = list(range(len(steps)))
    rng.shuffle(order)  # learned out of valid-time order
    learned = [dict(steps[i], tag=steps[i]["tag"] or ("out_of_order" if i != n else "")) for n, i in enumerate(order)]
    backdated_day = rng.randrange(days[0] + 1, days[1]) if days[1] - days[0] > 1 else days[0]
    learned.append({"op": "assert", "object": rng.choice(targets), "day": backdated_day, "tag": "backdated"})
    return learned


def generate(seed: int, subjects: int = 12, traps: int = 12) -> dict[str, Any]:
    rng = random.Random(seed)
    people = [f"Person {i}" for i in range(subjects + traps + 10)]
    orgs = [f"Org {i}" for i in range(8)]
    slots: list[tuple[str, str, str, list[dict[str, Any]]]] = []  # subject, type, role, steps
    for i in range(subjects):
        subject = people[i]
        for type_ in rng.sample(ONE, 2) + rng.sample(MANY, 2):
            targets = orgs if type_ == "works_for" else [p for p in people[subjects:] if p != subject]
            slots.append((subject, type_, "main", _history(rng, "one" if type_ in ONE else "many", targets)))
    trap_slots = []
    for j in range(traps):  # other subjects, the same type and target as a main subject's edge
        subject = people[subjects + j]
        _, type_, _, steps = rng.choice(slots)
        target = rng.choice([s["object"] for s in steps if s["op"] == "assert" and s["object"] != subject])
        trap_slots.append((subject, type_, "trap", [{"op": "assert", "object": target,
                                                     "day": rng.randrange(0, 1800), "tag": "trap"}]))
    # interleave: traps go first, then the main histories round-robin, so traps sit between them
    queue = [list(s[3]) for s in slots]
    order: list[tuple[int, dict[str, Any]]] = [(len(slots) + k, s[3][0]) for k, s in enumerate(trap_slots)]
    while any(queue):
        for k, steps in enumerate(queue):
            if steps:
                order.append((k, steps.pop(0)))
    all_slots = slots + trap_slots
    events = []
    for n, (k, step) in enumerate(order):
        subject, type_, _, _ = all_slots[k]
        events.append({"id": f"ev{n}", "subject": subject, "type": type_, "object": step["object"], "op": step["op"],
                       "valid_from": _iso(T0 + timedelta(days=step["day"])),
                       "recorded_at": _iso(RECORDED_T0 + timedelta(hours=n)), "tag": step["tag"]})
    return {"seed": seed, "types": {t: "one" for t in ONE} | {t: "many" for t in MANY}, "events": events,
            "queries": _queries(rng, events, all_slots)}


def _queries(rng: random.Random, events: list[dict[str, Any]],
             slots: list[tuple[str, str, str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    queries: list[dict[str, Any]] = []
    for subject, type_, role, _ in slots:
        mine = [e for e in events if e["subject"] == subject and e["type"] == type_]
        cardinality = "one" if type_ in ONE else "many"
        base = "trap" if role == "trap" else ("one_to_one" if cardinality == "one" else "many_to_many")
        learned = [_stamp(e["recorded_at"]) for e in mine]
        points: list[tuple[str, datetime | None, datetime | None]] = [(base, None, None)]
        for e in mine:  # at, and just before, every change point, as believed now
            at = _stamp(e["valid_from"])
            kind = base if role == "trap" else (e["tag"] or base)
            points += [(kind, at, None), (kind, at - timedelta(days=1), None)]
        for known_at in learned[:-1]:  # belief after each event but the last, now and in the past
            at = _stamp(rng.choice(mine)["valid_from"])
            points += [("known_at", None, known_at), ("known_at", at, known_at)]
        for kind, as_of, known_at in points:
            queries.append({"id": f"q{len(queries)}", "kind": kind, "subject": subject, "type": type_,
                            "as_of": _iso(as_of), "known_at": _iso(known_at),
                            "expect": expect(mine, cardinality, as_of, known_at)})
    return queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=Path, help="write the data set (events and queries) to this file")
    args = parser.parse_args()
    dataset = generate(args.seed)
    if args.save:
        args.save.write_text(json.dumps(dataset, indent=1))
    kinds: dict[str, int] = {}
    for q in dataset["queries"]:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    print(json.dumps({"events": len(dataset["events"]), "queries": len(dataset["queries"]), "by_kind": kinds}))


if __name__ == "__main__":
    main()
