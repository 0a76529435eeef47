"""The last two phases of `bench.load`: what ingest rate the machine sustains, then three times it.

- capacity: `writers` closed-loop writers (each sends its next batch as soon as the last one
  answered; after a refusal it pauses 50 ms) beside the usual query traffic. The messages the
  server accepted per second is the rate this machine sustains, measured in the same run.
- overload: open-loop batches at `factor` times that rate, beside the same queries. The server
  should take what it can at a bounded latency and refuse the rest at once with 429/503 and
  `Retry-After`. Afterwards the turns of the namespace are counted until the count settles:
  every message an accepted request carried must be stored (`lost` 0).

The targets of issue 25 are checked in `targets`: accepted writes' p99 <= 2 s, every refusal a
429/503 with `Retry-After` answered within 100 ms (p99), nothing lost, no other error.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import httpx

from bench.load_traffic import INGEST, Phase, messages, percentile, progress, run_phase
from kg.core.store.store import Store

ACCEPTED_P99_MS = 2000.0
REFUSED_P99_MS = 100.0


async def turn_count(store: Store, namespace: str) -> int:
    rows = await store.read("namespaces/counts", namespace=namespace)
    return int(rows[0]["turns"])


async def settled_count(store: Store, namespace: str, expected: int, wait_s: float = 60.0) -> int:
    """The namespace's turn count once it reaches `expected` or stops moving for 3 s (at most
    `wait_s`): a write the client gave up on may still land."""
    deadline = time.monotonic() + wait_s
    last, still_since = await turn_count(store, namespace), time.monotonic()
    while last != expected and time.monotonic() < deadline and time.monotonic() - still_since < 3:
        await asyncio.sleep(0.5)
        now = await turn_count(store, namespace)
        if now != last:
            last, still_since = now, time.monotonic()
    return last


async def capacity(client: httpx.AsyncClient, base: str, writes: str, seconds: float, writers: int, batch: int, qps: float,
                   max_inflight: int) -> dict[str, Any]:
    async def write(phase: Phase, until: float) -> None:
        async def writer(w: int) -> None:
            rng, sent = random.Random(100 + w), 0
            tag = f"capacity{w}-{int(time.time())}"
            while time.monotonic() < until:
                body = {"messages": messages(rng, tag, sent, batch)}
                sent += batch
                if not await phase.call(client, INGEST, "POST", writes + "/messages", json=body):
                    await asyncio.sleep(0.05)
        await asyncio.gather(*(writer(w) for w in range(writers)))

    out, phase = await run_phase(client, base, "capacity", seconds, qps, 0, batch, max_inflight, 4, background=write)
    out["writers"] = writers
    out["sustained_messages_per_s"] = round(phase.accepted_messages / out["seconds"], 1)
    progress(f"sustained ingest: {out['sustained_messages_per_s']} messages/s")
    return out


async def overload(client: httpx.AsyncClient, base: str, writes: str, store: Store, namespace: str, seconds: float,
                   factor: float, sustained: float, batch: int, qps: float) -> dict[str, Any]:
    rate = max(factor * sustained, float(batch))
    before = await turn_count(store, namespace)
    out, phase = await run_phase(client, base, "overload", seconds, qps, rate, batch, 10**6, 3, writes=writes)
    progress("overload: waiting for the accepted writes to be counted ...")
    stored = await settled_count(store, namespace, before + phase.accepted_messages) - before
    accepted = phase.latencies[INGEST]
    refused = phase.refusals()
    report = {
        "ingest_messages_per_s": round(rate, 1), "sustained_messages_per_s": sustained, "factor": factor,
        "messages_sent": out["messages_sent"], "accepted_requests": len(accepted),
        "accepted_messages": phase.accepted_messages,
        "accepted_p50_ms": round(percentile(accepted, 50), 1), "accepted_p99_ms": round(percentile(accepted, 99), 1),
        "accepted_max_ms": round(max(accepted, default=0.0), 1),
        "refused": refused, "other_errors": out["errors"],
        "turns_stored": stored, "lost": phase.accepted_messages - stored,
        "load_average": out["load_average"],
    }
    report["targets"] = {
        "accepted_p99_le_2s": report["accepted_p99_ms"] <= ACCEPTED_P99_MS,
        "refusals_429_503_with_retry_after": refused["without_retry_after"] == 0,
        "refused_p99_le_100ms": refused["p99_ms"] <= REFUSED_P99_MS,
        "none_lost": report["lost"] == 0, "no_other_error": out["errors"] == 0,
    }
    out["overload"] = report
    return out
