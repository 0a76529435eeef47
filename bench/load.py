"""Open-loop HTTP load on `kg serve` (API, job workers and scheduler): idle, under ingest, at the
ingest rate the machine sustains, and in overload at three times that rate.

    python -m bench.load --json                       # 20k prefilled turns, 60 s per phase
    python -m bench.load --quick --json               # 2k turns, 20 s phases: a few minutes

Fills a namespace with `--prefill` turns through the Python API (kept between runs: a namespace
that holds exactly them is reused; one that holds more, because an earlier run's phases wrote into
it, is emptied and refilled, as `--fresh` does) and runs the jobs they make (indexing,
summaries) to the end, so the namespace is in steady state. The phases write to a sibling
namespace, `<namespace>-live`, emptied at the start of each run: the namespace the queries read
stays at its prefill from run to run, while the writes cost the readers what they would in the same
namespace (the vector and fulltext indexes are the database's, shared by every namespace). Then starts `python -m kg.cli serve`
on a free 127.0.0.1 port, its sweeps every `--sweep-every` seconds, and runs four phases of the
same query traffic (`bench.load_traffic`: open-loop arrivals of the default search, /recall,
/search/sessions and /search/memories):
1. idle;
2. under ingest: messages at `--ingest-rate` per second in batches of `--batch` (with the jobs
   they make; each phase reports `jobs_done`). The query p95 here against idle is the cost of
   ingest to readers;
3. capacity: `--capacity-writers` closed-loop writers: the messages per second this machine
   sustains, in this run (`bench.load_overload`); the query p95 here against idle is the noisy
   neighbour's cost (`query_p95_ms.neighbour_ratio`);
4. overload: ingest at `--overload-factor` (3) times that rate. Reports the accepted writes'
   count and p50/p99, the refused requests by status and route with their answer times and
   whether each had `Retry-After`, and the turns stored against the messages accepted (`lost`).
Progress goes to stderr, with the machine's load average; every request has a 30 s timeout, so
a run ends. Nothing but 127.0.0.1 is contacted.
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
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any, Awaitable, Callable

import httpx
import psutil

from bench.load_overload import capacity, overload, turn_count
from bench.load_traffic import MIX, QUERIES, load_average, progress, run_phase, sentence
from kg import AsyncMemory, load_settings
from kg.core.models.turns import Message
from kg.core.store.store import Store

HOST = "127.0.0.1"
LIVE = "-live"  # the phases write to `<namespace>-live`
REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2023, 1, 1, tzinfo=timezone.utc)
QUICK = {"prefill": 2000, "seconds": 20.0, "capacity_seconds": 15.0, "overload_seconds": 20.0, "settle_s": 120.0,
         "warm_rounds": 1}


def server_env(args: argparse.Namespace) -> dict[str, str]:
    return dict(item.split("=", 1) for item in args.server_env)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


async def prefill(namespace: str, turns: int, fresh: bool, settle_s: float) -> dict[str, Any]:
    """`turns` turns in sessions of 40 through the Python API (reused when already there), then
    every job they make run to the end."""
    async with AsyncMemory(load_settings()) as memory:
        await memory.delete_namespace(namespace + LIVE)  # an earlier run's writes
        if fresh:
            await memory.delete_namespace(namespace)
        have = await turn_count(memory.store, namespace)
        if have > turns:  # an earlier run's phases wrote into it: every run starts from the same state
            progress(f"{namespace} holds {have} turns, more than the prefill: emptying it ...")
            await memory.delete_namespace(namespace)
            have = 0
        started = time.perf_counter()
        out: dict[str, Any] = {"turns": have, "reused": True, "seconds": 0.0}
        if have < turns:
            progress(f"prefill: {turns} turns into {namespace} (it holds {have}) ...")
            rng = random.Random(7)
            messages = (Message(namespace=namespace, session_id=f"pre-{i // 40}", role="user" if i % 2 == 0 else "assistant",
                                text=sentence(rng, i), ts=T0 + timedelta(minutes=i)) for i in range(turns))
            done = {"n": 0}

            def written(report: Any) -> None:
                done["n"] += report.received
                if done["n"] % 1000 < report.received:
                    progress(f"  prefill: {done['n']} of {turns}")
            await memory.ingest(messages, on_batch=written)
            out = {"turns": turns, "reused": False, "seconds": round(time.perf_counter() - started, 1)}
        # A namespace in steady state: its sessions indexed and summarized here, before the server
        # starts, so the idle phase is idle (otherwise the server's first sweep runs hundreds of
        # jobs during it). `settle_s` also waits for a job a killed earlier run left running.
        started = time.perf_counter()
        progress(f"settling {namespace}: running its due jobs ...")
        report = await memory.run_jobs(sweep=True, wait_s=settle_s, namespace=namespace)
        out["settled"] = {"jobs_done": len(report.done), "jobs_failed": len(report.retrying) + len(report.dead),
                          "pending": report.pending, "seconds": round(time.perf_counter() - started, 1)}
        return out


def start_server(port: int, keys: dict[str, list[str]], sweep_every: float, log: IO[bytes],
                 max_inflight_writes: int | None = None, extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, **(extra_env or {}), "KG_HTTP__KEYS": json.dumps(keys), "PYTHONPATH": str(REPO), "KG_HTTP__METRICS": "true",
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


async def metric_families(client: httpx.AsyncClient, url: str, admin_key: str) -> list[Any]:
    """The API process's `GET /metrics`, parsed (prometheus-client's metric families)."""
    from prometheus_client.parser import text_string_to_metric_families

    r = await client.get(url + "/metrics", headers={"X-API-Key": admin_key})
    r.raise_for_status()
    return list(text_string_to_metric_families(r.text))


async def server_time(client: httpx.AsyncClient, url: str, admin_key: str) -> dict[str, Any]:
    """Where the API process spent its time over the run (its `GET /metrics`): its refusals as it
    timed them (from the request reaching the app to the answer: the rest of a refusal's time at
    the client is waiting for the process's turn), seconds and calls per embedder kind, and the 8
    named statements that took longest in all."""
    families = await metric_families(client, url, admin_key)
    totals: dict[str, dict[str, list[float]]] = {"kg_embed_seconds": {}, "kg_neo4j_statement_seconds": {}}
    refusals = {"count": 0.0, "seconds": 0.0, "within_10ms": 0.0, "within_100ms": 0.0}
    for family in families:
        if family.name == "kg_http_request_seconds":  # refusals as the server timed them, queueing before excluded
            for sample in family.samples:
                if sample.labels.get("status") not in ("429", "503"):
                    continue
                le = {"0.01": "within_10ms", "0.1": "within_100ms"}.get(sample.labels.get("le", ""))
                key = le or {"kg_http_request_seconds_count": "count", "kg_http_request_seconds_sum": "seconds"}.get(
                    sample.name)
                if key:
                    refusals[key] += sample.value
        if family.name not in totals:
            continue
        for sample in family.samples:
            label = sample.labels.get("kind") or sample.labels.get("statement", "")
            slot = totals[family.name].setdefault(label, [0.0, 0.0])
            if sample.name.endswith("_sum"):
                slot[0] += sample.value
            elif sample.name.endswith("_count"):
                slot[1] += sample.value
    def top(d: dict[str, list[float]], n: int) -> dict[str, dict[str, float]]:
        return {k: {"seconds": round(v[0], 1), "calls": int(v[1]), "mean_ms": round(1000 * v[0] / v[1], 1) if v[1] else 0.0}
                for k, v in sorted(d.items(), key=lambda kv: -kv[1][0])[:n]}
    return {"refusals": {k: round(v, 3) if k == "seconds" else int(v) for k, v in refusals.items()},
            "embed": top(totals["kg_embed_seconds"], 4), "statements": top(totals["kg_neo4j_statement_seconds"], 8)}


async def loop_lag(client: httpx.AsyncClient, url: str, admin_key: str) -> dict[str, float]:
    """The API's `kg_event_loop_lag_seconds` so far, cumulative: samples, and how many were within
    10, 50, 100 and 250 ms (how late its event loop took up a step that was ready)."""
    out: dict[str, float] = {}
    for family in await metric_families(client, url, admin_key):
        if family.name == "kg_event_loop_lag_seconds":
            for sample in family.samples:
                le = sample.labels.get("le")
                if sample.name.endswith("_bucket") and le in ("0.01", "0.05", "0.1", "0.25", "+Inf"):
                    out["samples" if le == "+Inf" else f"within_{float(le) * 1000:g}ms"] = sample.value
    return out


async def warm_up(client: httpx.AsyncClient, base: str, rounds: int) -> None:
    """Models, caches, the server's JIT: every route with every query, `rounds` times."""
    progress(f"warm-up: {rounds * len(QUERIES) * len(MIX)} queries ...")
    for _ in range(rounds):
        for q in QUERIES:
            for _, path, _ in MIX:
                await client.get(base + path, params={"q": q, "k": 10})


async def phases(client: httpx.AsyncClient, base: str, store: Store, args: argparse.Namespace,
                 lag: Callable[[], Awaitable[dict[str, float]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    since = datetime.now(timezone.utc)
    out["idle"], _ = await run_phase(client, base, "idle", args.seconds, args.qps, 0, args.batch, args.max_inflight, 1)
    writes = base + LIVE  # the sibling namespace the phases write to (see the module's docstring)
    out["idle"]["jobs_done"] = await jobs_finished(client, base, since) + await jobs_finished(client, writes, since)
    since = datetime.now(timezone.utc)
    out["under_ingest"], _ = await run_phase(client, base, "under_ingest", args.seconds, args.qps, args.ingest_rate,
                                             args.batch, args.max_inflight, 2, writes=writes)
    out["under_ingest"]["jobs_done"] = (await jobs_finished(client, base, since)
                                        + await jobs_finished(client, writes, since))
    if args.overload_factor > 0:
        out["capacity"] = await capacity(client, base, writes, args.capacity_seconds, args.capacity_writers, args.batch,
                                         args.qps, args.max_inflight)
        before = await lag()
        out["overload"] = await overload(client, base, writes, store, args.namespace + LIVE,
                                         args.overload_seconds or args.seconds,
                                         args.overload_factor, out["capacity"]["sustained_messages_per_s"],
                                         args.batch, args.qps)
        after = await lag()  # the API's loop lag over the overload phase (and its count of turns)
        out["overload"]["overload"]["event_loop_lag"] = {k: int(after[k] - before.get(k, 0)) for k in after}
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    load_at_start = load_average()
    filled = await prefill(args.namespace, args.prefill, args.fresh, args.settle_s)
    key, admin_key = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    port = free_port()
    url = f"http://{HOST}:{port}"
    log = open(args.server_log, "w+b") if args.server_log else tempfile.TemporaryFile()
    progress(f"starting kg serve on port {port} ...")
    server = start_server(port, {key: [args.namespace, args.namespace + LIVE], admin_key: ["*"]}, args.sweep_every, log,
                          args.max_inflight_writes, server_env(args))
    store = await Store.connect(load_settings())
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
        async with httpx.AsyncClient(headers={"X-API-Key": key}, timeout=30, limits=limits) as client:
            await warm_up(client, base, args.warm_rounds)
            ran = await phases(client, base, store, args, lambda: loop_lag(client, url, admin_key))
            health = (await client.get(f"{url}/health")).status_code
            spent = await server_time(client, url, admin_key)
        stop.set()
        await sampler
    finally:
        progress("stopping the server ...")
        stop_server(server)
        log.close()
        await store.close()
    idle, loaded = ran["idle"], ran["under_ingest"]
    ratio = loaded["query_p95_ms"] / idle["query_p95_ms"] if idle["query_p95_ms"] else None
    # the noisy neighbour: another namespace ingesting as fast as the server takes it (the capacity phase)
    full = ran["capacity"]["query_p95_ms"] if "capacity" in ran else None
    full_ratio = full / idle["query_p95_ms"] if full is not None and idle["query_p95_ms"] else None
    before_overload = [idle, loaded] + ([ran["capacity"]] if "capacity" in ran else [])
    return {
        "target": f"kg serve (HTTP, workers, scheduler) on {HOST}", "namespace": args.namespace,
        "load_average": {"start": load_at_start, "end": load_average()},
        "server_env": server_env(args), "embedding_provider": load_settings().embedding.provider,
        "prefill": filled, "qps": args.qps, "ingest_messages_per_s": args.ingest_rate, "batch": args.batch,
        "errors": sum(p["errors"] for p in before_overload), "refused": sum(p["refused"] for p in before_overload),
        "late": idle["late"] + loaded["late"], "dropped": idle["dropped"] + loaded["dropped"],
        "server_peak_rss_mb": round(peak_rss / 2**20, 1),  # the server and its worker process
        "healthy_after": health == 200,
        "query_p95_ms": {"idle": idle["query_p95_ms"], "under_ingest": loaded["query_p95_ms"],
                         "ratio": round(ratio, 2) if ratio else None,
                         "neighbour_at_capacity": full,
                         "neighbour_ratio": round(full_ratio, 2) if full_ratio else None},
        "sustained_messages_per_s": ran["capacity"]["sustained_messages_per_s"] if "capacity" in ran else None,
        "overload": ran["overload"]["overload"] if "overload" in ran else None,
        "api_process_time": spent,  # summed over the whole run, warm-up included
        "phases": ran,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="A run of a few minutes: " + ", ".join(f"{k.replace('_', '-')} {v:g}" for k, v in QUICK.items())
                             + " (unless given).")
    parser.add_argument("--seconds", type=float, help="Length of the idle and under-ingest phases (default 60, at most 600).")
    parser.add_argument("--qps", type=float, default=4, help="Query arrivals per second.")
    parser.add_argument("--ingest-rate", type=float, default=20, help="Messages per second in the second phase.")
    parser.add_argument("--batch", type=int, default=10, help="Messages per ingest request.")
    parser.add_argument("--prefill", type=int, help="Turns in the namespace before the load (default 20000).")
    parser.add_argument("--namespace", default="bench-load", help="Kept between runs to reuse the prefill.")
    parser.add_argument("--fresh", action="store_true", help="Empty and refill the namespace first.")
    parser.add_argument("--settle-s", type=float,
                        help="How long the prefill waits for jobs still running (a killed run's lease; default 360).")
    parser.add_argument("--sweep-every", type=float, default=15,
                        help="The server's summarize and index sweeps run this often (seconds), so the jobs "
                             "the ingest makes run during the phase.")
    parser.add_argument("--max-inflight", type=int, default=64, help="Arrivals beyond this many outstanding are dropped.")
    parser.add_argument("--capacity-seconds", type=float, help="Length of the capacity phase (default 30).")
    parser.add_argument("--capacity-writers", type=int, default=2, help="Closed-loop writers in the capacity phase.")
    parser.add_argument("--overload-factor", type=float, default=3.0,
                        help="The overload phase ingests at this many times the sustained rate (0: neither phase).")
    parser.add_argument("--overload-seconds", type=float, help="Length of the overload phase (default --seconds).")
    parser.add_argument("--max-inflight-writes", type=int, help="The server's [http] max_inflight_writes.")
    parser.add_argument("--server-env", action="append", default=[], metavar="KG_X__Y=VALUE",
                        help="A setting for the server only (repeatable), e.g. KG_EMBEDDING__THREADS=1.")
    parser.add_argument("--server-log", type=Path, help="Keep the server's log in this file.")
    parser.add_argument("--json", action="store_true", help="Print only the JSON result.")
    args = parser.parse_args(argv)
    defaults = {"prefill": 20_000, "seconds": 60.0, "capacity_seconds": 30.0, "settle_s": 360.0, "warm_rounds": 3}
    for name, value in (QUICK if args.quick else defaults).items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    if not 0 < args.seconds <= 600 or args.qps <= 0 or args.ingest_rate < 0 or not 1 <= args.batch <= 500:
        parser.error("--seconds in (0, 600], --qps > 0, --ingest-rate >= 0, --batch in 1..500")
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"errors {result['errors']}, refused {result['refused']}, late {result['late']}, dropped "
              f"{result['dropped']}, query p95 idle {result['query_p95_ms']['idle']} ms, under ingest "
              f"{result['query_p95_ms']['under_ingest']} ms, RSS {result['server_peak_rss_mb']} MB, "
              f"load average {result['load_average']}")
        for name, phase in result["phases"].items():
            for label, r in phase["routes"].items():
                print(f"  {name:12} {label:22} served {r['served']:5}  p50 {r['p50_ms']:7.1f}  p95 {r['p95_ms']:7.1f}  "
                      f"p99 {r['p99_ms']:7.1f} ms  refused {r['refused']}  errors {r['errors']}")
        if result["overload"]:
            o = result["overload"]
            print(f"  overload at {o['ingest_messages_per_s']} messages/s (sustained {o['sustained_messages_per_s']}): "
                  f"accepted {o['accepted_requests']} (p50 {o['accepted_p50_ms']}, p99 {o['accepted_p99_ms']} ms), "
                  f"refused {o['refused']['by_status']} (p99 {o['refused']['p99_ms']} ms), lost {o['lost']}; "
                  f"targets {o['targets']}")
    overload = result["overload"]
    held = overload is None or all(overload["targets"].values())
    return 0 if result["errors"] == 0 and result["healthy_after"] and held else 1


if __name__ == "__main__":
    sys.exit(main())
