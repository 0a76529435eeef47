"""Bi-temporal relationships on the real Neo4j: accuracy against an independent reference.

    python -m bench.relationships --seed 7 --json [--data FILE] [--save FILE] [--keep]

Generates relationship events from the seed (`bench.relationships_reference`; `--data` reads a
saved set instead, `--save` writes the one used), replays them through `AsyncMemory.relate` (each
event's recorded_at as transaction time) into a fresh namespace with the set's cardinalities, then
answers every query through `AsyncMemory.relationships` (as_of, known_at; null means now).
`accuracy` is the share of queries answered exactly, overall and per kind; `over_invalidated`
counts expected edges missing from an answer (an edge ended or dropped that should hold), the
failure graphiti #1728 reported; `spurious` counts edges returned that should not hold.
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
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.relationships_reference import generate
from kg import AsyncMemory, Settings
from kg.core.models.facts import entity_key


def _stamp(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


async def run(dataset: dict[str, Any], keep: bool = False) -> dict[str, Any]:
    namespace = f"bench-relationships-{uuid.uuid4().hex[:8]}"
    settings = Settings(memory={"relationships": dataset["types"]})
    async with AsyncMemory(settings) as memory:
        try:
            decisions: Counter[str] = Counter()
            started = time.perf_counter()
            for e in dataset["events"]:
                result = await memory.relate(namespace, e["subject"], e["type"], e["object"],
                                             valid_from=_stamp(e["valid_from"]), recorded_at=_stamp(e["recorded_at"]),
                                             op=e["op"])
                decisions[result.decision] += 1
            replay_s = time.perf_counter() - started
            right: Counter[str] = Counter()
            total: Counter[str] = Counter()
            over, spurious, latencies, misses = 0, 0, [], []
            for q in dataset["queries"]:
                started = time.perf_counter()
                found = await memory.relationships(namespace, q["subject"], q["type"], as_of=_stamp(q["as_of"]),
                                                   known_at=_stamp(q["known_at"]))
                latencies.append((time.perf_counter() - started) * 1000)
                got = Counter(r.object_key for r in found)
                want = Counter(entity_key(x) for x in q["expect"])
                over += sum((want - got).values())
                spurious += sum((got - want).values())
                ok = got == want
                total[q["kind"]] += 1
                right[q["kind"]] += ok
                misses += [] if ok else [q["id"]]
        finally:
            if not keep:
                await memory.delete_namespace(namespace)
    return {
        "queries": sum(total.values()),
        "accuracy": sum(right.values()) / max(1, sum(total.values())),
        "by_kind": {kind: right[kind] / total[kind] for kind in sorted(total)},
        "over_invalidated": over,
        "spurious": spurious,
        "events": len(dataset["events"]),
        "decisions": dict(decisions),
        "seed": dataset.get("seed"),
        "replay_s": round(replay_s, 2),
        "p50_ms": round(statistics.median(latencies), 3) if latencies else None,
        "misses": misses[:20],
        "namespace": namespace if keep else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, help="a saved data set instead of generating one")
    parser.add_argument("--save", type=Path, help="write the data set used to this file")
    parser.add_argument("--keep", action="store_true", help="keep the namespace for a look in Neo4j Browser")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    args = parser.parse_args()
    if args.data is not None and not args.data.is_file():
        sys.exit(f"error: no data set at {args.data}")
    dataset = json.loads(args.data.read_text()) if args.data else generate(args.seed)
    if args.save:
        args.save.write_text(json.dumps(dataset, indent=1))
    report = asyncio.run(run(dataset, args.keep))
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
