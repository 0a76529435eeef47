"""Bi-temporal facts on the real Neo4j: accuracy and point-in-time query latency.

    python -m bench.temporal --data ../shared/data/temporal_dev.json --json [--scale 100000]

Replays the dev set's events through `Memory.remember` (the event's recorded_at as transaction
time) into a fresh namespace, with the file's predicate registry, then answers every query through
`Memory.facts` (as_of, known_at; 2099-01-01 means now). `--scale N` first grows the namespace by
N synthetic facts about other subjects, written in bulk (`cypher/facts/bulk.cypher`).
Prints accuracy overall and per kind, p50/p95 of the facts() calls, and the Fact node count. The
namespace is deleted afterwards unless --keep. `bench.temporal_reference` is the same replay on
the pure core, without a database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from kg import AsyncMemory, Settings
from kg.core.models.facts import entity_id, entity_key
from kg.core.store.store import Store

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "temporal_dev.json"
NOW_MARK = datetime(2099, 1, 1, tzinfo=timezone.utc)
BULK_BATCH = 5000


def _stamp(text: str | None) -> datetime | None:
    """An instant of the file; None for null and for 2099-01-01, which means now."""
    if text is None:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return None if value >= NOW_MARK else value


async def grow(store: Store, namespace: str, n: int, predicates: list[str]) -> None:
    """N single-version facts, ten per synthetic subject, one per predicate slot."""
    t0 = datetime(2023, 1, 1, tzinfo=timezone.utc)
    per_subject = max(1, len(predicates))
    for start in range(0, n, BULK_BATCH):
        rows = []
        for i in range(start, min(n, start + BULK_BATCH)):
            key = entity_key(f"synthetic:{i // per_subject}")
            when = t0 + timedelta(minutes=i)
            rows.append({"entity_id": entity_id(namespace, key), "subject_key": key,
                         "predicate": predicates[i % per_subject], "object_value": f"value-{i}",
                         "source": "stated", "valid_from": when, "recorded_at": when,
                         "event_id": f"fev_bulk_{uuid.uuid4().hex}", "fact_id": f"fact_bulk_{uuid.uuid4().hex}"})
        await store.write("facts/bulk", namespace=namespace, rows=rows)


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def run(dataset: dict[str, Any], scale: int, keep: bool) -> dict[str, Any]:
    namespace = f"bench-temporal-{uuid.uuid4().hex[:8]}"
    settings = Settings(memory={"predicates": dataset["predicates"]})
    async with AsyncMemory(settings) as memory:
        try:
            started = time.perf_counter()
            if scale:
                await grow(memory.store, namespace, scale, sorted(dataset["predicates"]) or ["likes"])
            grow_s = time.perf_counter() - started
            decisions: Counter[str] = Counter()
            started = time.perf_counter()
            for raw in dataset["events"]:
                result = await memory.remember(
                    namespace, raw["subject"], raw["predicate"], raw["object"], valid_from=_stamp(raw["valid_from"]),
                    recorded_at=_stamp(raw["recorded_at"]), source=raw.get("source", "stated"), op=raw["op"])
                decisions[result.decision] += 1
            replay_s = time.perf_counter() - started
            first = dataset["queries"][0]
            await memory.facts(namespace, first["subject"], first["predicate"])  # warm-up: plan compilation
            right: Counter[str] = Counter()
            total: Counter[str] = Counter()
            latencies: list[float] = []
            misses: list[str] = []
            for query in dataset["queries"]:
                started = time.perf_counter()
                found = await memory.facts(namespace, query["subject"], query["predicate"],
                                           as_of=_stamp(query["as_of"]), known_at=_stamp(query["known_at"]))
                latencies.append((time.perf_counter() - started) * 1000)
                ok = sorted(f.object_value for f in found) == sorted(query["expect"])
                total[query["kind"]] += 1
                right[query["kind"]] += ok
                misses += [] if ok else [query["id"]]
            [counts] = await memory.store.read("facts/counts", namespace=namespace)
        finally:
            if not keep:
                await memory.delete_namespace(namespace)
    return {
        "accuracy": sum(right.values()) / max(1, sum(total.values())),
        "by_kind": {kind: right[kind] / total[kind] for kind in sorted(total)},
        "p50_ms": round(statistics.median(latencies), 3),
        "p95_ms": round(_percentile(latencies, 0.95), 3),
        "facts": counts["facts"],
        "queries": sum(total.values()),
        "events": len(dataset["events"]),
        "scale": scale,
        "decisions": dict(decisions),
        "replay_s": round(replay_s, 2),
        "grow_s": round(grow_s, 2),
        "misses": misses[:20],
        "namespace": namespace if keep else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--scale", type=int, default=0, help="synthetic facts to add first")
    parser.add_argument("--keep", action="store_true", help="keep the namespace for a look in Neo4j Browser")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"error: no temporal dev set at {args.data} (expected ../shared/data/temporal_dev.json "
                 "beside the repository; pass --data)")
    if args.scale < 0:
        sys.exit("error: --scale must be 0 or more")
    report = asyncio.run(run(json.loads(args.data.read_text()), args.scale, args.keep))
    if args.json:
        print(json.dumps(report))
    else:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
