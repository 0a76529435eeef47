"""Many tenants in one database: each tenant's vector lists and search against the same tenant alone.

    python -m bench.tenants --json                                 # 1,000 namespaces, 1M turns
    python -m bench.tenants --turns 100000 --tenants 100 --json    # scaled down

Builds `--tenants` namespaces (`bench-tenants-NNNN`) holding `--turns` synthetic turns in all, in
sessions of 20, with long-tailed sizes: a hundredth of the tenants hold 10k-50k turns, a
twenty-fifth 3k-10k, a fifth 500-3k, the rest 20-500 (scaled so that they add up to `--turns`).
They are written through the product's bulk path (`TurnWriter`, batches of 500 turns in one
transaction each), then every session is closed (`summarize_due`: context keys, offline
summaries); vectors come from a pool of sentences embedded once, as in `bench.scale`, each turn's
moved by a little noise of its own (`JITTER`: no two turns share a vector). A re-run
with `--keep` writes only what is missing. The managed server is restarted after the writes (its
checkpoint merges the index segments bulk writes leave).

Then, for `--sample` tenants of each size bucket and `--queries` questions each:
- `vector_recall`: each vector list the product reads on a large tenant (the turn key, the context
  key, the summaries), from the index path, against the exact top `index_candidates` within the
  tenant (cosine over the tenant's own vectors): the share of the exact list's places the index
  list fills with a vector scoring at least as well (ties, frequent with pooled vectors, count);
- `search`: `Memory.retrieve` p50/p95 per bucket, after `--warmup` questions;
- `import`: the largest sampled tenant exported with `kg export --vectors` and loaded into a fresh
  namespace with `kg import ndjson` (the CLI, each its own process), turns per second of each;
- `planted`: the LoCoMo development conversations (`--data`), each in its own namespace, planted
  in the crowd: turn R@10 and session R@5 of the default search and of the index path
  (`exact_max_turns = 0`), measured before the crowd is written (`alone`) and after (`crowd`). A
  crowd that is already there (`--keep`) has no `alone` figures.
Namespaces are deleted at the end unless --keep.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from bench import arguments, locomo, scale
from kg import AsyncMemory, load_settings
from kg.core.models.turns import Message
from kg.core.settings.tree import Settings
from kg.ingest.summaries.offline import OfflineSummarizer
from kg.ingest.summaries.writer import SessionSummarizer
from kg.ingest.turns import TurnWriter
from kg.queries import candidates as cand

PREFIX = "bench-tenants"
BUCKETS = (("under_500", 0, 500), ("500_3k", 500, 3000), ("3k_10k", 3000, 10_000), ("10k_50k", 10_000, 10**12))
KEYS = ("turn", "context")
JITTER = 0.01  # each turn's vector moved off its pool sentence's (bench.scale.PooledEmbedder)


def tenant_sizes(turns: int, tenants: int, seed: int) -> list[int]:
    """Long-tailed sizes in whole sessions, adding up to about `turns`."""
    rng = random.Random(seed)
    xl, large, medium = max(1, tenants // 100), max(1, tenants // 25), max(1, tenants // 5)
    small = max(0, tenants - xl - large - medium)
    raw = ([10_000 * 4.3 ** (i / max(1, xl - 1)) for i in range(xl)]
           + [3_000 * (10 / 3) ** rng.random() for _ in range(large)]
           + [500 * 6 ** rng.random() for _ in range(medium)]
           + [20 * 25 ** rng.random() for _ in range(small)])[:tenants]
    factor = turns / sum(raw)
    step = scale.SESSION_TURNS
    return [max(step, round(r * factor / step) * step) for r in raw]


def bucket_of(size: int) -> str:
    return next(name for name, lo, hi in BUCKETS if lo <= size < hi)


def namespace(i: int) -> str:
    return f"{PREFIX}-{i:04d}"


async def held(memory: AsyncMemory, ns: str) -> int:
    return sum(s.message_count for s in await memory.sessions(ns, limit=10**7))


def stream(sizes: list[int], have: dict[str, int], pool: list[str], seed: int) -> Iterator[Message]:
    for i, size in enumerate(sizes):
        yield from scale.messages(namespace(i), pool, have.get(namespace(i), 0), size, seed + i)


async def build(memory: AsyncMemory, settings: Settings, sizes: list[int], seed: int) -> dict[str, Any]:
    """Write what is missing of every tenant, then close their sessions; what it took."""
    pool = scale.sentence_pool(seed, 1500)
    embedder = await asyncio.to_thread(scale.PooledEmbedder, memory.embedder, pool, JITTER)
    have = {namespace(i): await held(memory, namespace(i)) for i in range(len(sizes))}
    missing = sum(max(0, size - have.get(namespace(i), 0)) for i, size in enumerate(sizes))
    started = time.perf_counter()
    done = 0

    def progress(report: Any) -> None:
        nonlocal done
        before, done = done, done + report.received
        if done // 50_000 != before // 50_000:
            print(f"turns written: {done} of {missing} ({done / (time.perf_counter() - started):.0f}/s)",
                  file=sys.stderr)

    writer = TurnWriter(memory.store, embedder, settings)
    if missing:
        await writer.write(stream(sizes, have, pool, seed), on_batch=progress)
    write_s = time.perf_counter() - started
    summarizer = SessionSummarizer(memory.store, embedder, settings,
                                   OfflineSummarizer(settings.memory.summaries, embedder))
    started = time.perf_counter()
    now = datetime.now(timezone.utc)
    closed = 0
    for i in range(len(sizes)):
        closed += len(await summarizer.due(namespace(i), now=now))
        if i % 100 == 99:
            print(f"tenants closed: {i + 1} of {len(sizes)}", file=sys.stderr)
    summarize_s = time.perf_counter() - started
    return {"written": missing, "write_s": round(write_s, 1),
            "write_turns_per_s": round(missing / write_s) if missing and write_s else None,
            "sessions_closed": closed, "close_s": round(summarize_s, 1)}


def sample(sizes: list[int], per_bucket: int, seed: int) -> dict[str, list[int]]:
    rng = random.Random(seed)
    chosen: dict[str, list[int]] = {}
    for name, lo, hi in BUCKETS:
        members = [i for i, s in enumerate(sizes) if lo <= s < hi]
        chosen[name] = sorted(rng.sample(members, min(per_bucket, len(members))))
    return {k: v for k, v in chosen.items() if v}


def filled(index: list[cand.Candidate], exact: list[cand.Candidate]) -> float:
    """Share of the exact list's places the index list fills with a vector at least as near (ties count)."""
    if not exact:
        return 1.0
    floor = exact[-1].score - 1e-6
    return min(len(exact), sum(c.score >= floor for c in index)) / len(exact)


async def vector_recall(memory: AsyncMemory, chosen: dict[str, list[int]], sizes: list[int], queries: int,
                        seed: int) -> dict[str, Any]:
    store = memory.store
    depth = memory.settings.memory.retrieval.index_candidates
    policy = memory.settings.memory.vectors
    total = sum(sizes)
    rng = random.Random(seed)
    out: dict[str, Any] = {}
    for bucket, members in chosen.items():
        shares: dict[str, list[float]] = {key: [] for key in (*KEYS, "summary")}
        for i in members:
            ns = namespace(i)
            asked = [scale.question(rng) for _ in range(queries)]
            vectors = await asyncio.to_thread(memory.embedder.embed, asked)
            for vector in vectors:
                for key in KEYS:
                    lists = [await cand.turn_list(store, "vector", key, ns, vector=vector, lucene="", depth=depth,
                                                  exact=exact, as_of=None,
                                                  fetch=cand.index_fetch(store, policy, depth, sizes[i], total))
                             for exact in (False, True)]
                    shares[key].append(filled(*lists))
                index_s, exact_s = [await cand.summary_sessions(store, "vector", ns, vector=vector, lucene="",
                                                                depth=depth, exact=exact, as_of=None)
                                    for exact in (False, True)]
                shares["summary"].append(len(set(index_s) & set(exact_s)) / len(exact_s) if exact_s else 1.0)
        out[bucket] = {"tenants": len(members), "sizes": [sizes[i] for i in members],
                       **{key: round(statistics.fmean(v), 4) for key, v in shares.items()},
                       "min": round(min(min(v) for v in shares.values()), 4)}
    return out


async def search_latency(memory: AsyncMemory, chosen: dict[str, list[int]], queries: int, warmup: int,
                         seed: int) -> dict[str, Any]:
    rng = random.Random(seed + 1)
    everyone = [i for members in chosen.values() for i in members]
    for _ in range(warmup):
        await memory.retrieve(namespace(rng.choice(everyone)), scale.question(rng), k=10)
    out: dict[str, Any] = {}
    for bucket, members in chosen.items():
        ms: list[float] = []
        for i in members:
            for _ in range(queries):
                started = time.perf_counter()
                await memory.retrieve(namespace(i), scale.question(rng), k=10)
                ms.append((time.perf_counter() - started) * 1000)
        out[bucket] = {"p50_ms": round(statistics.median(ms), 2), "p95_ms": round(scale.percentile(ms, 0.95), 2),
                       "queries": len(ms)}
    return out


def import_speed(source: str, turns: int) -> dict[str, Any]:
    """`kg export --vectors` of `source`, then `kg import ndjson` of the file into a fresh namespace,
    through the CLI; the copy is deleted (by the caller's clean-up of the prefix)."""
    target = f"{PREFIX}-import"
    cli = [sys.executable, "-m", "kg.cli"]
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "tenant.ndjson"
        started = time.perf_counter()
        subprocess.run([*cli, "export", "-n", source, "--vectors", "-o", str(file)], check=True, capture_output=True)
        exported = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run([*cli, "import", "ndjson", str(file), "-n", target], check=True, capture_output=True)
        imported = time.perf_counter() - started
    return {"namespace": source, "turns": turns, "export_s": round(exported, 1), "import_s": round(imported, 1),
            "import_turns_per_s": round(turns / imported)}


async def planted(data: Path, conversations: list[dict], prefix: str) -> dict[str, Any]:
    """Turn R@10 and session R@5 of the planted conversations, default path and index path."""
    out: dict[str, Any] = {}
    for path, env in (("default", None), ("index_path", "0")):
        if env is not None:
            os.environ["KG_MEMORY__VECTORS__EXACT_MAX_TURNS"] = env
        try:
            async with AsyncMemory(load_settings()) as memory:
                await locomo.prepare(memory, data, prefix, "product", conversations)
                found = await locomo.evaluate(memory, prefix, conversations, memory.settings.memory.retrieval.strategy)
        finally:
            os.environ.pop("KG_MEMORY__VECTORS__EXACT_MAX_TURNS", None)
        out[path] = {"turn_recall@10": found["turn_recall"]["10"], "session_recall@5": found["session_recall"]["5"],
                     "session_recall_any@5": found["session_recall_any"]["5"], "p95_ms": found["p95_ms"]}
    return out


async def run(turns: int, tenants: int, per_bucket: int, queries: int, warmup: int, data: Path | None, keep: bool,
              seed: int) -> dict[str, Any]:
    settings = load_settings()
    sizes = tenant_sizes(turns, tenants, seed)
    conversations = json.loads(data.read_text("utf-8")) if data is not None else []
    plant = f"{PREFIX}-locomo"
    result: dict[str, Any] = {"turns": sum(sizes), "tenants": len(sizes),
                              "buckets": {name: sum(lo <= s < hi for s in sizes) for name, lo, hi in BUCKETS}}
    try:
        async with AsyncMemory(settings) as memory:
            crowd = await held(memory, namespace(0))
        alone = await planted(data, conversations, plant) if conversations and not crowd else None
        started = time.perf_counter()
        async with AsyncMemory(settings) as memory:
            built = await build(memory, settings, sizes, seed)
        restarted = bool(built["written"] or built["sessions_closed"]) and \
            await asyncio.to_thread(scale.checkpoint_by_restart, settings)
        result["build"] = {**built, "build_s": round(time.perf_counter() - started, 1), "restarted": restarted}
        chosen = sample(sizes, per_bucket, seed)
        async with AsyncMemory(settings) as memory:
            result["search"] = await search_latency(memory, chosen, queries, warmup, seed)
            result["vector_recall"] = await vector_recall(memory, chosen, sizes, queries, seed)
            largest = max((i for members in chosen.values() for i in members), key=lambda i: sizes[i])
            await memory.delete_namespace(f"{PREFIX}-import")
        result["import"] = await asyncio.to_thread(import_speed, namespace(largest), sizes[largest])
        async with AsyncMemory(settings) as memory:
            await memory.delete_namespace(f"{PREFIX}-import")
        if conversations:
            result["planted"] = {"alone": alone, "crowd": await planted(data, conversations, plant)}
    finally:
        if not keep:
            async with AsyncMemory(settings) as memory:
                for i in range(len(sizes)):
                    await memory.delete_namespace(namespace(i))
                for conv in conversations:
                    await memory.delete_namespace(f"{plant}-{conv['sample_id']}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = arguments.parser(__doc__, Path("../shared/data/locomo/locomo_dev.json"))
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--tenants", type=int, default=1_000)
    parser.add_argument("--sample", type=int, default=5, help="tenants measured in each size bucket")
    parser.add_argument("--queries", type=int, default=20, help="questions per measured tenant")
    parser.add_argument("--warmup", type=int, default=300, help="questions asked first (the server's JIT warm-up)")
    parser.add_argument("--no-planted", action="store_true", help="leave out the LoCoMo conversations")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", action="store_true", help="keep the namespaces (a re-run then only measures)")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    data = None
    if not args.no_planted:
        if arguments.absent(args.data, "LoCoMo", "../shared/data/locomo/README.md"):
            return 2
        data = args.data
    result = asyncio.run(run(args.turns, args.tenants, args.sample, args.queries, args.warmup, data, args.keep,
                             args.seed))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
