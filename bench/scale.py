"""Recall latency on one large namespace.

    python -m bench.scale --turns 100000 --json

Grows one namespace (`bench-scale` unless --namespace) to `--turns` synthetic turns in sessions of
20, through the real write path (TurnWriter, then summarize_due: context keys, offline summaries),
restarts the managed local server (its shutdown checkpoint commits and merges the index segments
the bulk writes left; `restarted_after_writes`), then times `Memory.recall` (and `retrieve`) for
`--queries` questions, after `--warmup` others whose recall latency is reported apart
(`warmup_recall_*`): after a restart the server's JIT takes a few hundred queries to settle, and
the targets are for a settled server. With a server of your own (`[neo4j] uri`), restart it after
the build and time again with --keep.
Re-runs only add what is missing.

Embedding 100k turns and as many context keys with MiniLM on two cores would take hours and
measures the embedder, not retrieval; the synthetic turns are therefore drawn from a fixed pool
of sentences, each embedded once for real, and a text made of several known sentences (a context
key, an extractive summary) gets the normalized mean of their vectors. Queries are embedded for
real. The namespace is deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import re
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

import numpy as np

from kg import AsyncMemory, load_settings
from kg.core.embedders.base import Embedder
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.models.turns import Message
from kg.core.settings.tree import Settings
from kg.ingest.summaries.offline import OfflineSummarizer
from kg.ingest.summaries.writer import SessionSummarizer
from kg.ingest.turns import TurnWriter

PEOPLE = ["Maya", "Ravi", "Lena", "Tomasz", "Aiko", "Jon", "Gina", "Omar", "Sofia", "Kwame"]
SUBJECTS = ["the sensor project", "our Postgres cluster", "the Kyoto trip", "my sister's wedding", "the quarterly report",
            "the onboarding flow", "the robot fleet", "my running plan", "the API gateway", "the garden",
            "the hiring pipeline", "the mobile app", "the pottery class", "the book club", "the kitchen renovation",
            "the charity run", "the camping weekend", "the tax return", "the new puppy", "the guitar lessons"]
VERBS = ["needs", "should use", "is blocked on", "depends on", "was moved to", "will replace", "keeps failing because of",
         "got faster after", "is scheduled after", "must avoid", "was inspired by", "ran into trouble with"]
OBJECTS = ["TimescaleDB", "a weekly review", "the vendor contract", "better caching", "a vegetarian menu",
           "structured logging", "the Lisbon office", "a two-week sprint", "the October deadline", "a quieter hotel",
           "an extra reviewer", "more integration tests", "a cheaper flight", "the landlord", "a local mentor"]
SESSION_TURNS = 20
_SUFFIX = re.compile(r" \(#(\d+)\)$")


def sentence_pool(seed: int, size: int) -> list[str]:
    rng = random.Random(seed)
    pool = {f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}." for _ in range(size * 3)}
    return sorted(pool)[:size]


class PooledEmbedder:
    """Real vectors for the pool's sentences; texts built from them get the mean of their lines.
    `jitter`: a turn's text (one pool sentence and its "(#i)") gets its sentence's vector moved by
    noise of that deviation per dimension, seeded by i, as a real embedder moves it for the number
    (0.01 at 384 dimensions: cosine about 0.98 to the sentence); without it, every turn of a
    sentence has the same vector, and an HNSW graph holding thousands of exact duplicates leaves
    some unreachable (bench.tenants)."""

    def __init__(self, real: Embedder, pool: Sequence[str], jitter: float = 0.0) -> None:
        self.real, self.name, self.dim = real, real.name, real.dim
        self.known = dict(zip(pool, real.embed(list(pool))))
        self.jitter = jitter

    def _moved(self, text: str, vector: list[float]) -> list[float]:
        number = _SUFFIX.search(text.strip())
        if not self.jitter or number is None or "\n" in text.strip():
            return vector
        moved = np.asarray(vector) + np.random.default_rng(int(number.group(1))).normal(0.0, self.jitter, self.dim)
        return (moved / np.linalg.norm(moved)).tolist()

    def _line(self, line: str) -> list[float] | None:
        line = line.split(": ", 1)[-1] if ": " in line[:40] else line
        return self.known.get(_SUFFIX.sub("", line.strip().rstrip("…")))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float] | None] = []
        missing = []
        for text in texts:
            found = [v for v in (self._line(x) for x in text.split("\n")) if v is not None]
            if found:
                mean = [sum(c) / len(found) for c in zip(*found)]
                norm = sum(c * c for c in mean) ** 0.5 or 1.0
                out.append(self._moved(text, [c / norm for c in mean]))
            else:
                out.append(None)
                missing.append(len(out) - 1)
        if missing:
            for i, v in zip(missing, self.real.embed([texts[i] for i in missing])):
                out[i] = v
        return out  # type: ignore[return-value]


def messages(namespace: str, pool: list[str], start: int, end: int, seed: int) -> list[Message]:
    t0 = datetime(2023, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(start, end):
        rng = random.Random(seed * 1_000_003 + i)
        session = i // SESSION_TURNS
        pair = (PEOPLE[session % len(PEOPLE)], PEOPLE[(session * 7 + 3) % len(PEOPLE)])
        speaker = pair[i % 2]
        ts = t0 + timedelta(hours=6 * session, seconds=30 * (i % SESSION_TURNS))
        out.append(Message(namespace=namespace, role="user" if i % 2 == 0 else "assistant", speaker=speaker,
                           text=f"{rng.choice(pool)} (#{i})", ts=ts, session_id=f"scale-{session:06d}"))
    return out


def checkpoint_by_restart(settings: Settings) -> bool:
    """Stop and start the managed local server. Its clean shutdown checkpoints, which commits the
    Lucene indexes and merges the many small segments bulk writes leave: before that, an HNSW query
    over the context keys cost 10 ms of server time instead of 2.5. Community has no
    db.checkpoint(), and the scheduled one comes every 15 minutes. False when the server is not the
    managed one (restart it yourself and re-run with --keep)."""
    cfg = settings.neo4j
    if cfg.uri is not None:
        return False
    local = LocalNeo4j(cfg.local, cfg.password.get_secret_value() if cfg.password else None)
    if local.pid() is None:
        return False
    echo = functools.partial(print, file=sys.stderr)
    local.stop(echo=echo)
    local.start(echo=echo)
    return True


def question(rng: random.Random) -> str:
    return f"What did {rng.choice(PEOPLE)} say about {rng.choice(SUBJECTS)} and {rng.choice(OBJECTS)}?"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def build(memory: AsyncMemory, settings: Settings, namespace: str, turns: int, seed: int) -> dict[str, Any]:
    """Write the missing turns, then summarize (context keys, summaries); what it took."""
    pool = sentence_pool(seed, 1500)
    embedder = await asyncio.to_thread(PooledEmbedder, memory.embedder, pool)
    have = sum(s.message_count for s in await memory.sessions(namespace, limit=10**7))
    started = time.perf_counter()
    writer = TurnWriter(memory.store, embedder, settings)
    step = 20_000
    for lo in range(have, turns, step):
        await writer.write(messages(namespace, pool, lo, min(turns, lo + step), seed))
        print(f"turns written: {min(turns, lo + step)}", file=sys.stderr)
    write_s = time.perf_counter() - started
    summarizer = SessionSummarizer(memory.store, embedder, settings, OfflineSummarizer(settings.memory.summaries, embedder))
    started = time.perf_counter()
    summarized = await summarizer.due(namespace, now=datetime.now(timezone.utc))
    return {"written": turns - have if have < turns else 0, "write_s": round(write_s, 1),
            "summarize_s": round(time.perf_counter() - started, 1), "sessions_summarized": len(summarized)}


async def timed(memory: AsyncMemory, namespace: str, queries: int, warmup: int, seed: int) -> dict[str, Any]:
    """Recall and retrieve latency, after `warmup` other questions (their recall reported apart):
    after a restart the server's JIT needs a few hundred queries before latency settles."""
    rng, warm_rng = random.Random(seed), random.Random(seed + 1)
    asked = [question(rng) for _ in range(queries)]
    print(f"warm-up: {warmup} questions, then {queries} timed", file=sys.stderr)
    warm_ms: list[float] = []
    for _ in range(warmup):
        q = question(warm_rng)
        t = time.perf_counter()
        await memory.recall(namespace, q, k=10)
        warm_ms.append((time.perf_counter() - t) * 1000)
        await memory.retrieve(namespace, q, k=10)
    recall_ms, retrieve_ms = [], []
    for q in asked:
        t = time.perf_counter()
        await memory.recall(namespace, q, k=10)
        recall_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        await memory.retrieve(namespace, q, k=10)
        retrieve_ms.append((time.perf_counter() - t) * 1000)
    return {
        "warmup_recall_p50_ms": round(statistics.median(warm_ms), 2) if warm_ms else None,
        "warmup_recall_p95_ms": round(percentile(warm_ms, 0.95), 2) if warm_ms else None,
        "recall_p50_ms": round(statistics.median(recall_ms), 2), "recall_p95_ms": round(percentile(recall_ms, 0.95), 2),
        "retrieve_p50_ms": round(statistics.median(retrieve_ms), 2),
        "retrieve_p95_ms": round(percentile(retrieve_ms, 0.95), 2),
    }


async def run(turns: int, queries: int, warmup: int, namespace: str, keep: bool, seed: int) -> dict[str, Any]:
    settings = load_settings()
    built: dict[str, Any] = {}
    try:
        async with AsyncMemory(settings) as memory:
            built = await build(memory, settings, namespace, turns, seed)
        restarted = (built["written"] > 0 or built["sessions_summarized"] > 0) and \
            await asyncio.to_thread(checkpoint_by_restart, settings)
        async with AsyncMemory(settings) as memory:
            times = await timed(memory, namespace, queries, warmup, seed)
            total = sum(s.message_count for s in await memory.sessions(namespace, limit=10**7))
    finally:
        if not keep:
            async with AsyncMemory(settings) as memory:
                await memory.delete_namespace(namespace)
    return {"turns": total, "queries": queries, "warmup_queries": warmup, **times,
            **{k: v for k, v in built.items() if k != "written"}, "restarted_after_writes": restarted}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=300,
                        help="questions asked first, reported apart (the server's JIT warm-up)")
    parser.add_argument("--namespace", default="bench-scale")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the namespace (a re-run then only times)")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.turns, args.queries, args.warmup, args.namespace, args.keep, args.seed))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
