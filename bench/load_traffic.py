"""The traffic of `bench.load`: open-loop arrivals (queries, ingest batches) and what a phase saw.

A request is sent at its time whether or not earlier ones answered; one that cannot start within
100 ms of its time counts as late, and one beyond `max_inflight` outstanding requests is dropped.
Every answer is sorted: served (latency per route), refused (429/503, with its answer time and
whether it carried `Retry-After`), or an error (any other status >= 400, or a transport error).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

import httpx

from bench.ingest import OBJECTS, SUBJECTS, VERBS

QUERIES = ["which database did we pick?", "what is blocked?", "deadline", "TimescaleDB", "hotel",
           "integration tests", "who needs a weekly review?", "Lisbon office"]
MIX = [("GET /search", "/search", 0.4), ("GET /recall", "/recall", 0.2),
       ("GET /search/sessions", "/search/sessions", 0.2), ("GET /search/memories", "/search/memories", 0.2)]
INGEST = "POST /messages"
REFUSALS = (429, 503)


def sentence(rng: random.Random, i: int) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})."


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def load_average() -> list[float]:
    """The machine's 1, 5 and 15 minute load averages (other work shares its two cores)."""
    return [round(x, 2) for x in os.getloadavg()]


def progress(line: str) -> None:
    print(f"[bench.load {time.strftime('%H:%M:%S')} load {load_average()[0]}] {line}", file=sys.stderr, flush=True)


def messages(rng: random.Random, tag: str, first: int, n: int) -> list[dict[str, str]]:
    """`n` messages numbered from `first`, in sessions of 40 named after `tag`, their times unique
    to the run (yesterday plus a millisecond each), so that none is already stored."""
    start = datetime.now(timezone.utc) - timedelta(days=1)
    return [{"role": "user" if (first + j) % 2 == 0 else "assistant", "text": sentence(rng, first + j),
             "ts": (start + timedelta(milliseconds=first + j)).isoformat(),
             "session_id": f"live-{tag}-{(first + j) // 40}"} for j in range(n)]


class Phase:
    """What one phase saw: latencies and errors per route, refusals, late and dropped arrivals."""

    def __init__(self, max_inflight: int) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)  # served requests
        self.errors: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.late = self.dropped = self.inflight = 0
        self.max_inflight = max_inflight
        self.tasks: list[asyncio.Task[bool]] = []
        self.started = time.perf_counter()
        self.timeline: list[tuple[float, str, float]] = []  # (seconds into the phase, route, ms)
        self.accepted_messages = 0
        self.refused: list[tuple[str, int, float, bool]] = []  # (route, status, ms, with Retry-After)
        self.load_before = load_average()
        self.client_lag: list[float] = []  # ms: how late this client's own loop fired a 0.1 s timer

    async def watch_client(self, until: float) -> None:
        """This client's own event-loop lag: a request's time includes the wait for this loop to see
        its answer, so a slow client would count against the server."""
        loop = asyncio.get_running_loop()
        while time.monotonic() < until:
            at = loop.time()
            await asyncio.sleep(0.1)
            self.client_lag.append(max(0.0, (loop.time() - at - 0.1) * 1000))

    def send(self, client: httpx.AsyncClient, label: str, method: str, url: str, lag: float, **kw: Any) -> None:
        if lag > 0.1:
            self.late += 1
        if self.inflight >= self.max_inflight:
            self.dropped += 1
            return
        self.tasks.append(asyncio.create_task(self.call(client, label, method, url, **kw)))

    async def call(self, client: httpx.AsyncClient, label: str, method: str, url: str, **kw: Any) -> bool:
        """One request; True when it was served."""
        self.inflight += 1
        start = time.perf_counter()
        try:
            r: httpx.Response | None = await client.request(method, url, **kw)
        except httpx.HTTPError as exc:
            r, failure = None, type(exc).__name__
        finally:
            self.inflight -= 1
        ms = round((time.perf_counter() - start) * 1000, 1)
        self.timeline.append((round(start - self.started, 2), label, ms))
        if r is not None and r.status_code in REFUSALS:
            self.refused.append((label, r.status_code, ms, "retry-after" in r.headers))
            return False
        if r is None or r.status_code >= 400:
            self.errors[label][failure if r is None else str(r.status_code)] += 1
            return False
        self.latencies[label].append(ms)
        if label == INGEST:
            self.accepted_messages += r.json()["accepted"]
        return True

    def report(self, seconds: float) -> dict[str, Any]:
        labels = sorted(set(self.latencies) | set(self.errors) | {label for label, *_ in self.refused})
        routes = {}
        for label in labels:
            served = self.latencies[label]
            refused = [ms for route, _, ms, _ in self.refused if route == label]
            routes[label] = {"served": len(served), "refused": len(refused), "errors": sum(self.errors[label].values()),
                             "errors_by_status": dict(self.errors[label]), "served_per_s": round(len(served) / seconds, 2),
                             **{f"p{p}_ms": round(percentile(served, p), 1) for p in (50, 95, 99)}}
        queries = [x for label, v in self.latencies.items() if label != INGEST for x in v]
        return {"seconds": round(seconds, 1), "load_average": {"before": self.load_before, "after": load_average()},
                "late": self.late, "dropped": self.dropped,
                "errors": sum(r["errors"] for r in routes.values()), "refused": len(self.refused),
                "accepted_messages": self.accepted_messages,
                "query_p95_ms": round(percentile(queries, 95), 1), "routes": routes,
                "client_loop_lag_ms": {f"p{p}": round(percentile(self.client_lag, p), 1) for p in (50, 99, 100)},
                "slowest": sorted(self.timeline, key=lambda x: -x[2])[:10]}

    def refusals(self) -> dict[str, Any]:
        """The refused requests: by status and route, their answer times, and those without Retry-After."""
        by_status: dict[str, int] = defaultdict(int)
        by_route: dict[str, int] = defaultdict(int)
        for label, status, _, _ in self.refused:
            by_status[str(status)] += 1
            by_route[label] += 1
        ms = [ms for _, _, ms, _ in self.refused]
        return {"count": len(self.refused), "by_status": dict(by_status), "by_route": dict(by_route),
                "without_retry_after": sum(1 for *_, has in self.refused if not has),
                "p50_ms": round(percentile(ms, 50), 1), "p99_ms": round(percentile(ms, 99), 1),
                "max_ms": round(max(ms, default=0.0), 1)}


async def on_schedule(rate: float, until: float, fire: Callable[[float], None]) -> None:
    """Call `fire(lag)` at `rate` per second until `until`, never waiting for what it started."""
    start = time.monotonic()
    i = 0
    while True:
        due = start + i / rate
        if due >= until:
            return
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        fire(time.monotonic() - due)
        i += 1


async def ticker(phase: Phase, name: str, until: float, every_s: float = 10.0) -> None:
    """A progress line on stderr every `every_s` seconds of a phase."""
    while time.monotonic() + every_s < until:
        await asyncio.sleep(every_s)
        done = sum(len(v) for v in phase.latencies.values())
        progress(f"  {name}: {done} served, {len(phase.refused)} refused, "
                 f"{sum(sum(e.values()) for e in phase.errors.values())} errors, {phase.inflight} in flight")


def arrivals(client: httpx.AsyncClient, phase: Phase, base: str, writes: str, rng: random.Random, tag: str,
             batch: int, sent: dict[str, int]) -> tuple[Callable[[float], None], Callable[[float], None]]:
    """A phase's two kinds of arrival: `query(lag)` sends one query of the mix to the namespace at
    `base`, `ingest(lag)` one batch of `batch` messages (sessions named after `tag`, counted in
    `sent["messages"]`) to the one at `writes`."""

    def query(lag: float) -> None:
        label, path, _ = rng.choices(MIX, weights=[w for *_, w in MIX])[0]
        phase.send(client, label, "GET", base + path, lag, params={"q": rng.choice(QUERIES), "k": 10})

    def ingest(lag: float) -> None:
        body = {"messages": messages(rng, tag, sent["messages"], batch)}
        sent["messages"] += batch
        phase.send(client, INGEST, "POST", writes + "/messages", lag, json=body)

    return query, ingest


async def run_phase(client: httpx.AsyncClient, base: str, name: str, seconds: float, qps: float, ingest_rate: float,
                    batch: int, max_inflight: int, seed: int, background: Any = None,
                    writes: str | None = None) -> tuple[dict[str, Any], Phase]:
    """`seconds` of query arrivals at `qps` (the mix above) on the namespace at `base` and, with
    `ingest_rate` > 0, batches of `batch` messages at that many messages per second to the one at
    `writes` (default `base`); `background(phase, until)`, if given, runs beside them (closed-loop
    writers)."""
    progress(f"phase {name}: {seconds:g} s, {qps:g} queries/s, {ingest_rate:g} messages/s")
    phase = Phase(max_inflight)
    until = time.monotonic() + seconds
    sent = {"messages": 0}
    query, ingest = arrivals(client, phase, base, writes or base, random.Random(seed), f"{name}-{int(time.time())}",
                             batch, sent)
    schedules = [on_schedule(qps, until, query), ticker(phase, name, until), phase.watch_client(until)]
    if ingest_rate > 0:
        schedules.append(on_schedule(ingest_rate / batch, until, ingest))
    if background is not None:
        schedules.append(background(phase, until))
    started = time.monotonic()
    await asyncio.gather(*schedules)
    await asyncio.gather(*phase.tasks)
    out = phase.report(time.monotonic() - started)
    out["messages_sent"] = sent["messages"]
    progress(f"phase {name} done: query p95 {out['query_p95_ms']} ms, {out['accepted_messages']} messages accepted, "
             f"{out['refused']} refused, {out['errors']} errors")
    return out, phase
