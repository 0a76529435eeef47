"""Bi-temporal fact accuracy of the pure core, with no database: the number a Neo4j run must match.

Replays `temporal_dev.json` in file (recorded_at) order through `kg.ingest.temporal.plan`,
keeping the records in memory, then answers every query with `holds`. Prints JSON.

    python -m bench.temporal_reference [--data ../shared/data/temporal_dev.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.ingest.temporal import FactEvent, FactRecord, PredicateRegistry, apply, holds, plan

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "temporal_dev.json"

Scope = tuple[str, str]


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def event_from_json(raw: dict[str, Any]) -> FactEvent:
    return FactEvent(
        id=raw["id"], op=raw["op"], subject=raw["subject"], predicate=raw["predicate"],
        object_value=raw["object"], valid_from=_stamp(raw["valid_from"]),
        recorded_at=_stamp(raw["recorded_at"]), source=raw.get("source", "stated"),
    )


def replay(dataset: dict[str, Any]) -> tuple[dict[Scope, list[FactRecord]], Counter[str]]:
    """All record versions per subject+predicate after every event, and how often each decision came out."""
    registry = PredicateRegistry(dataset.get("predicates", {}))
    counter = itertools.count(1)
    records: dict[Scope, list[FactRecord]] = defaultdict(list)
    events: dict[Scope, list[FactEvent]] = defaultdict(list)
    decisions: Counter[str] = Counter()
    for raw in dataset["events"]:
        event = event_from_json(raw)
        scope = (event.subject, event.predicate)
        believed = [r for r in records[scope] if r.expired_at is None]
        step = plan(believed, event, registry, lambda: f"f{next(counter)}", prior_events=events[scope])
        records[scope] = apply(records[scope], step)
        events[scope].append(event)
        decisions[step.decision] += 1
    return records, decisions


def score(dataset: dict[str, Any]) -> dict[str, Any]:
    records, decisions = replay(dataset)
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses: list[str] = []
    for query in dataset["queries"]:
        found = holds(records.get((query["subject"], query["predicate"]), []),
                      _stamp(query["as_of"]), None if query["known_at"] is None else _stamp(query["known_at"]))
        ok = sorted(r.object_value for r in found) == sorted(query["expect"])
        total[query["kind"]] += 1
        right[query["kind"]] += ok
        if not ok:
            misses.append(query["id"])
    per_kind = {k: {"n": total[k], "accuracy": right[k] / total[k]} for k in sorted(total)}
    return {
        "queries": sum(total.values()),
        "accuracy": sum(right.values()) / max(1, sum(total.values())),
        "per_kind": per_kind,
        "decisions": dict(decisions),
        "record_versions": sum(len(v) for v in records.values()),
        "misses": misses[:20],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    print(json.dumps(score(json.loads(args.data.read_text())), indent=2))


if __name__ == "__main__":
    main()
