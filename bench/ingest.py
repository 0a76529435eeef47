"""Ingest throughput: embedding alone vs full ingestion (embedding + Neo4j writes), same run.

    python -m bench.ingest --turns 50000 --json

The turns are synthetic conversation lines generated from a fixed seed (regenerable), spread
over sessions of 20 turns in one fresh namespace that is deleted afterwards (unless --keep).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone

from kg import AsyncMemory, load_settings
from kg.core.models.turns import Message

SUBJECTS = ["the analytics service", "our Postgres cluster", "the Kyoto trip", "my sister's wedding",
            "the quarterly report", "the onboarding flow", "the robot fleet", "my running plan",
            "the new API gateway", "the garden project", "the hiring pipeline", "the mobile app"]
VERBS = ["needs", "should use", "is blocked on", "depends on", "was moved to", "will replace",
         "keeps failing because of", "got faster after", "is scheduled after", "must avoid"]
OBJECTS = ["TimescaleDB", "a weekly review", "the vendor contract", "better caching", "a vegetarian menu",
           "structured logging", "the Lisbon office", "a two-week sprint", "pathlib", "the old scripts",
           "an extra reviewer", "more integration tests", "the October deadline", "a quieter hotel"]
OPENERS = ["", "Quick update: ", "I think ", "Honestly, ", "Remember that ", "FYI ", "As we said, "]


def synthetic_messages(n: int, namespace: str, seed: int = 7) -> list[Message]:
    rng = random.Random(seed)
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(n):
        sentence = f"{rng.choice(OPENERS)}{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
        if rng.random() < 0.5:
            sentence += f", and {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
        out.append(Message(namespace=namespace, role="user" if i % 2 == 0 else "assistant",
                           text=f"{sentence} (note {i}).", ts=t0 + timedelta(minutes=i),
                           session_id=f"bench-{i // 20}"))
    return out


async def run(turns: int, keep: bool, rounds: int) -> dict[str, float | int]:
    """Embedding-only and full ingestion alternate round by round over the same turns, so drift in
    the machine's speed (a shared VM) falls on both sides alike."""
    namespace = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    messages = synthetic_messages(turns, namespace)
    async with AsyncMemory(load_settings()) as memory:
        embedder = memory.embedder
        batch = memory.settings.ingest.batch_size
        embedder.embed([m.text for m in messages[:batch]])  # warm-up, not timed
        embed_s = full_s = 0.0
        written = 0
        per_round = -(-turns // rounds)
        for start in range(0, turns, per_round):
            part = messages[start : start + per_round]
            t0 = time.perf_counter()
            for i in range(0, len(part), batch):
                embedder.embed([m.text for m in part[i : i + batch]])
            embed_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            report = await memory.ingest(part)
            full_s += time.perf_counter() - t0
            written += report.written
        if written != turns:
            raise SystemExit(f"expected {turns} new turns, wrote {written}")
        if not keep:
            await memory.delete_namespace(namespace)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    embed_rate, full_rate = turns / embed_s, turns / full_s
    return {
        "turns": turns,
        "embed_only_turns_per_s": round(embed_rate, 1),
        "full_turns_per_s": round(full_rate, 1),
        "ratio": round(full_rate / embed_rate, 3),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "batch_size": batch,
        "rounds": rounds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50_000)
    parser.add_argument("--json", action="store_true", help="print only the JSON result")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark namespace")
    parser.add_argument("--rounds", type=int, default=10, help="alternations of embedding-only and full ingest")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.turns, args.keep, max(1, args.rounds)))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    sys.exit(main())
