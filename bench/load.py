"""Open-loop HTTP load on `kg serve` (API, job workers and scheduler), idle and under ingest.

    python -m bench.load --json                       # 20k prefilled turns, 60 s per phase
    python -m bench.load --prefill 2000 --seconds 30 --json

Fills a namespace with `--prefill` turns through the Python API (kept between runs: a namespace
that already holds them is reused; `--fresh` refills it) and runs the jobs they make (indexing,
summaries) to the end, so the namespace is in steady state. Then starts `python -m kg.cli serve`
on a free 127.0.0.1 port, its sweeps every `--sweep-every` seconds, and runs two phases of the
same query traffic: idle, then while messages are ingested at `--ingest-rate` per second (with
the jobs they make; each phase reports `jobs_done`). Arrivals follow a schedule (open loop): a
request is sent at its time whether or not earlier ones answered; one that cannot start within 100 ms of its time
counts as late, and one beyond `--max-inflight` outstanding requests is dropped. The query mix is
the default search (GET /search, no strategy), /recall, /search/sessions and /search/memories.
Reports p50/p95/p99 per route and phase, errors, late/dropped counts, the server's peak RSS, and
the query p95 under ingest against idle. A third phase, overload, ingests at `--overload-factor`
(3) times the message rate the second phase sustained: it reports the accepted writes' p99, the
refused ones by status with their answer time and whether each had `Retry-After`, and the turns
stored against the messages accepted (`lost`). Nothing but 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

import httpx
import psutil

from bench.ingest import OBJECTS, SUBJECTS, VERBS
from kg import AsyncMemory, load_settings
from kg.core.models import Message

HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parents[1]
QUERIES = ["which database did we pick?", "what is blocked?", "deadline", "TimescaleDB", "hotel",
           "integration tests", "who needs a weekly review?", "Lisbon office"]
MIX = [("GET /search", "/search", 0.4), ("GET /recall", "/recall", 0.2),
       ("GET /search/sessions", "/search/sessions", 0.2), ("GET /search/memories", "/search/memories", 0.2)]
T0 = datetime(2023, 1, 1, tzinfo=timezone.utc)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def sentence(rng: random.Random, i: int) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})."


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Phase:
    """What one phase saw: latencies and errors per route, late and dropped arrivals."""

    def __init__(self, max_inflight: int) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.late = self.dropped = self.inflight = 0
        self.max_inflight = max_inflight
        self.tasks: list[asyncio.Task[None]] = []
        self.started = time.perf_counter()
        self.timeline: list[tuple[float, str, float]] = []  # (seconds into the phase, route, ms)
        self.accepted_ms: list[float] = []  # writes the server took
        self.accepted_messages = 0
        self.refused: list[tuple[int, float, bool]] = []  # (status, ms, with Retry-After)

    def send(self, client: httpx.AsyncClient, label: str, method: str, url: str, lag: float, **kw: Any) -> None:
        if lag > 0.1:
            self.late += 1
        if self.inflight >= self.max_inflight:
            self.dropped += 1
            return
        self.tasks.append(asyncio.create_task(self._call(client, label, method, url, **kw)))

    async def _call(self, client: httpx.AsyncClient, label: str, method: str, url: str, **kw: Any) -> None:
        self.inflight += 1
        start = time.perf_counter()
        try:
            r = await client.request(method, url, **kw)
            status = str(r.status_code) if r.status_code >= 400 else None
        except httpx.HTTPError as exc:
            r, status = None, type(exc).__name__
        finally:
            self.inflight -= 1
        ms = (time.perf_counter() - start) * 1000
        self.latencies[label].append(ms)
        if r is not None and r.status_code in (429, 503):
            self.refused.append((r.status_code, ms, "retry-after" in r.headers))
        elif r is not None and r.status_code < 300 and method == "POST":
            self.accepted_ms.append(ms)
            self.accepted_messages += r.json()["accepted"]
        self.timeline.append((round(start - self.started, 2), label, round(self.latencies[label][-1], 1)))
        if status:
            self.errors[label][status] += 1

    def overload_report(self) -> dict[str, Any]:
        refused_ms = [ms for _, ms, _ in self.refused]
        by_status: dict[str, int] = defaultdict(int)
        for status, _, _ in self.refused:
            by_status[str(status)] += 1
        return {"accepted_requests": len(self.accepted_ms), "accepted_messages": self.accepted_messages,
                "accepted_p99_ms": round(percentile(self.accepted_ms, 99), 1),
                "refused": len(self.refused), "refused_by_status": dict(by_status),
                "refused_without_retry_after": sum(1 for *_, has in self.refused if not has),
                "refused_p99_ms": round(percentile(refused_ms, 99), 1),
                "refused_max_ms": round(max(refused_ms, default=0.0), 1)}

    def report(self, seconds: float) -> dict[str, Any]:
        routes = {label: {"requests": len(v), "errors": sum(self.errors[label].values()),
                          "errors_by_status": dict(self.errors[label]), "rps": round(len(v) / seconds, 2),
                          **{f"p{p}_ms": round(percentile(v, p), 1) for p in (50, 95, 99)}}
                  for label, v in sorted(self.latencies.items())}
        queries = [x for label, v in self.latencies.items() if label != "POST /messages" for x in v]
        return {"seconds": round(seconds, 1), "late": self.late, "dropped": self.dropped,
                "errors": sum(r["errors"] for r in routes.values()),
                "query_p95_ms": round(percentile(queries, 95), 1), "routes": routes,
                "slowest": sorted(self.timeline, key=lambda x: -x[2])[:10]}


async def on_schedule(rate: float, until: float, fire: Any) -> None:
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


async def prefill(namespace: str, turns: int, fresh: bool, settle_s: float) -> dict[str, Any]:
    """`turns` turns in sessions of 40 through the Python API (reused when already there), then
    every job they make run to the end."""
    async with AsyncMemory(load_settings()) as memory:
        if fresh:
            await memory.delete_namespace(namespace)
        rows = await memory.store.read("queries/namespace_exists", namespace=namespace)
        have = 0
        if rows[0]["exists"]:
            records, _, _ = await memory.store.driver.execute_query(
                "MATCH (t:Turn {namespace: $ns}) RETURN count(t) AS n", ns=namespace)
            have = records[0]["n"]
        started = time.perf_counter()
        out: dict[str, Any] = {"turns": have, "reused": True, "seconds": 0.0}
        if have < turns:
            rng = random.Random(7)
            messages = (Message(namespace=namespace, session_id=f"pre-{i // 40}", role="user" if i % 2 == 0 else "assistant",
                                text=sentence(rng, i), ts=T0 + timedelta(minutes=i)) for i in range(turns))
            await memory.ingest(messages)
            out = {"turns": turns, "reused": False, "seconds": round(time.perf_counter() - started, 1)}
        # A namespace in steady state: its sessions indexed and summarized here, before the server
        # starts, so the idle phase is idle (otherwise the server's first sweep runs hundreds of
        # jobs during it). `settle_s` also waits for a job a killed earlier run left running.
        started = time.perf_counter()
        print(f"settling {namespace}: running its due jobs ...", file=sys.stderr, flush=True)
        report = await memory.run_jobs(sweep=True, wait_s=settle_s, namespace=namespace)
        out["settled"] = {"jobs_done": len(report.done), "jobs_failed": len(report.retrying) + len(report.dead),
                          "pending": report.pending, "seconds": round(time.perf_counter() - started, 1)}
        return out


def start_server(port: int, key: str, namespace: str, sweep_every: float, log: IO[bytes],
                 max_inflight_writes: int | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KG_HTTP__KEYS": json.dumps({key: [namespace]}), "PYTHONPATH": str(REPO),
           "KG_SCHEDULES__SUMMARIZE__EVERY_S": str(sweep_every), "KG_SCHEDULES__INDEX__EVERY_S": str(sweep_every)}
    if max_inflight_writes is not None:
        env["KG_HTTP__MAX_INFLIGHT_WRITES"] = str(max_inflight_writes)
    return subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "--host", HOST, "--port", str(port)],
                            cwd=REPO, env=env, stdout=log, stderr=log)


async def wait_ready(server: subprocess.Popen[bytes], url: str, log: IO[bytes], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=5) as client:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                log.seek(0)
                raise RuntimeError("the server exited: " + log.read().decode(errors="replace")[-2000:])
            try:
                if (await client.get(url + "/health")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.5)
    raise TimeoutError(f"the server did not answer /health within {timeout_s:.0f} s")


def stop_server(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(90)  # a job in hand is finished first
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


async def jobs_finished(client: httpx.AsyncClient, base: str, since: datetime) -> int:
    """The namespace's jobs that finished since `since` (of its newest 1000 done or dead ones):
    how much background work ran during a phase."""
    finished = 0
    for status in ("done", "dead"):
        r = await client.get(base + "/jobs", params={"status": status, "limit": 1000})
        r.raise_for_status()
        finished += sum(1 for j in r.json() if j["finished_at"] and datetime.fromisoformat(j["finished_at"]) >= since)
    return finished


async def run_phase(client: httpx.AsyncClient, base: str, seconds: float, qps: float, ingest_rate: float,
                    batch: int, max_inflight: int, seed: int, overload: bool = False) -> dict[str, Any]:
    print(f"phase {seed}: {seconds:g} s, {qps:g} queries/s, {ingest_rate:g} messages/s ...", file=sys.stderr, flush=True)
    phase = Phase(max_inflight)
    rng = random.Random(seed)
    until = time.monotonic() + seconds
    sent = {"messages": 0}

    def query(lag: float) -> None:
        label, path, _ = rng.choices(MIX, weights=[w for *_, w in MIX])[0]
        phase.send(client, label, "GET", base + path, lag, params={"q": rng.choice(QUERIES), "k": 10})

    def ingest(lag: float) -> None:
        i = sent["messages"]
        start = datetime.now(timezone.utc) - timedelta(days=1)
        messages = [{"role": "user" if (i + j) % 2 == 0 else "assistant", "text": sentence(rng, i + j),
                     "ts": (start + timedelta(milliseconds=seed * 10_000_000 + i + j)).isoformat(),
                     "session_id": f"live-{seed}-{(i + j) // 40}"} for j in range(batch)]
        sent["messages"] += batch
        phase.send(client, "POST /messages", "POST", base + "/messages", lag, json={"messages": messages})

    schedules = [on_schedule(qps, until, query)]
    if ingest_rate > 0:
        schedules.append(on_schedule(ingest_rate / batch, until, ingest))
    started = time.monotonic()
    await asyncio.gather(*schedules)
    await asyncio.gather(*phase.tasks)
    out = phase.report(time.monotonic() - started)
    out["messages_sent"] = sent["messages"]
    if overload:
        out["overload"] = phase.overload_report()
    return out


async def turn_count(namespace: str) -> int:
    async with AsyncMemory(load_settings()) as memory:
        rows = await memory.store.read("queries/namespace_counts", namespace=namespace)
        return int(rows[0]["turns"])


async def overload_phase(client: httpx.AsyncClient, base: str, args: argparse.Namespace,
                         sustained: float) -> dict[str, Any]:
    """Ingest at `--overload-factor` times the rate the under-ingest phase sustained (messages the
    server accepted per second), with the same query traffic: the server should refuse the excess
    with 429/503 and Retry-After at once, keep the accepted writes fast, and store every accepted
    message (turns after - turns before == accepted)."""
    rate = max(args.overload_factor * sustained, float(args.batch))
    before = await turn_count(args.namespace)
    seconds = args.overload_seconds or args.seconds
    out = await run_phase(client, base, seconds, args.qps, rate, args.batch, 10**6, 3, overload=True)
    stored = await turn_count(args.namespace) - before
    out["overload"].update({"ingest_messages_per_s": round(rate, 1), "sustained_messages_per_s": round(sustained, 1),
                            "turns_stored": stored, "lost": out["overload"]["accepted_messages"] - stored})
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    filled = await prefill(args.namespace, args.prefill, args.fresh, args.settle_s)
    key = secrets.token_urlsafe(24)
    port = free_port()
    url = f"http://{HOST}:{port}"
    log = open(args.server_log, "w+b") if args.server_log else tempfile.TemporaryFile()
    server = start_server(port, key, args.namespace, args.sweep_every, log, args.max_inflight_writes)
    peak_rss = 0
    try:
        await wait_ready(server, url, log)
        proc = psutil.Process(server.pid)
        base = f"{url}/v1/namespaces/{args.namespace}"
        stop = asyncio.Event()

        async def sample() -> None:
            nonlocal peak_rss
            while not stop.is_set():
                try:  # the server and its worker process
                    peak_rss = max(peak_rss, sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]))
                except psutil.NoSuchProcess:
                    pass
                await asyncio.sleep(0.5)

        sampler = asyncio.create_task(sample())
        limits = httpx.Limits(max_connections=args.max_inflight + 4)
        async with httpx.AsyncClient(headers={"X-API-Key": key}, timeout=60, limits=limits) as client:
            for _ in range(3):  # warm-up: models, caches, the server's JIT
                for q in QUERIES:
                    for _, path, _ in MIX:
                        await client.get(base + path, params={"q": q, "k": 10})
            idle_from = datetime.now(timezone.utc)
            idle = await run_phase(client, base, args.seconds, args.qps, 0, args.batch, args.max_inflight, 1)
            ingest_from = datetime.now(timezone.utc)
            idle["jobs_done"] = await jobs_finished(client, base, idle_from)
            loaded = await run_phase(client, base, args.seconds, args.qps, args.ingest_rate, args.batch,
                                     args.max_inflight, 2)
            loaded["jobs_done"] = await jobs_finished(client, base, ingest_from)
            phases = {"idle": idle, "under_ingest": loaded}
            if args.overload_factor > 0:
                accepted = sum(r["requests"] - r["errors"] for label, r in loaded["routes"].items()
                               if label == "POST /messages") * args.batch
                phases["overload"] = await overload_phase(client, base, args, accepted / loaded["seconds"])
            health = (await client.get(f"{url}/health")).status_code
        stop.set()
        await sampler
    finally:
        stop_server(server)
        log.close()
    ratio = loaded["query_p95_ms"] / idle["query_p95_ms"] if idle["query_p95_ms"] else None
    return {
        "target": f"kg serve (HTTP, workers, scheduler) on {HOST}", "namespace": args.namespace,
        "prefill": filled, "qps": args.qps, "ingest_messages_per_s": args.ingest_rate, "batch": args.batch,
        "errors": idle["errors"] + loaded["errors"], "late": idle["late"] + loaded["late"],
        "dropped": idle["dropped"] + loaded["dropped"], "server_peak_rss_mb": round(peak_rss / 2**20, 1),  # the server and its worker process
        "healthy_after": health == 200,
        "query_p95_ms": {"idle": idle["query_p95_ms"], "under_ingest": loaded["query_p95_ms"],
                         "ratio": round(ratio, 2) if ratio else None},
        "overload": phases["overload"]["overload"] if "overload" in phases else None,
        "phases": phases,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="Length of each phase (at most 600).")
    parser.add_argument("--qps", type=float, default=4, help="Query arrivals per second.")
    parser.add_argument("--ingest-rate", type=float, default=20, help="Messages per second in the second phase.")
    parser.add_argument("--batch", type=int, default=10, help="Messages per ingest request.")
    parser.add_argument("--prefill", type=int, default=20_000, help="Turns in the namespace before the load.")
    parser.add_argument("--namespace", default="bench-load", help="Kept between runs to reuse the prefill.")
    parser.add_argument("--fresh", action="store_true", help="Empty and refill the namespace first.")
    parser.add_argument("--settle-s", type=float, default=360,
                        help="How long the prefill waits for jobs still running (a killed run's lease).")
    parser.add_argument("--sweep-every", type=float, default=15,
                        help="The server's summarize and index sweeps run this often (seconds), so the jobs "
                             "the ingest makes run during the phase.")
    parser.add_argument("--max-inflight", type=int, default=64, help="Arrivals beyond this many outstanding are dropped.")
    parser.add_argument("--overload-factor", type=float, default=3.0,
                        help="A third phase ingests at this many times the rate the second sustained (0: none).")
    parser.add_argument("--overload-seconds", type=float, help="Length of the overload phase (default --seconds).")
    parser.add_argument("--max-inflight-writes", type=int, help="The server's [http] max_inflight_writes.")
    parser.add_argument("--server-log", type=Path, help="Keep the server's log in this file.")
    parser.add_argument("--json", action="store_true", help="Print only the JSON result.")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 600 or args.qps <= 0 or args.ingest_rate < 0 or not 1 <= args.batch <= 500:
        parser.error("--seconds in (0, 600], --qps > 0, --ingest-rate >= 0, --batch in 1..500")
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"errors {result['errors']}, late {result['late']}, dropped {result['dropped']}, "
              f"query p95 idle {result['query_p95_ms']['idle']} ms, under ingest "
              f"{result['query_p95_ms']['under_ingest']} ms, RSS {result['server_peak_rss_mb']} MB")
        for name, phase in result["phases"].items():
            for label, r in phase["routes"].items():
                print(f"  {name:12} {label:22} n={r['requests']:5}  p50 {r['p50_ms']:7.1f}  p95 {r['p95_ms']:7.1f}  "
                      f"p99 {r['p99_ms']:7.1f} ms  errors {r['errors']}")
        if result["overload"]:
            o = result["overload"]
            print(f"  overload at {o['ingest_messages_per_s']} messages/s: accepted {o['accepted_requests']} "
                  f"(p99 {o['accepted_p99_ms']} ms), refused {o['refused_by_status']} (p99 {o['refused_p99_ms']} ms, "
                  f"max {o['refused_max_ms']} ms), lost {o['lost']}")
    overload = result["overload"]
    held = overload is None or (overload["lost"] == 0 and overload["refused_without_retry_after"] == 0)
    return 0 if result["errors"] == 0 and result["healthy_after"] and held else 1


if __name__ == "__main__":
    sys.exit(main())
