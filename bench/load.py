"""HTTP load test on loopback: sustained ingest plus search and fact reads for N seconds.

    python -m bench.load --seconds 60 --json

Starts the API (`uvicorn kg.http:default_app`) as a child process on a free 127.0.0.1 port with
one API key for a fresh namespace, runs a few concurrent clients until the time or the request
cap is up, stops the server, deletes the namespace and prints p50/p95 latency and error counts
per endpoint. Nothing but 127.0.0.1 is contacted.
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
import uuid
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

import httpx
import psutil

from bench.ingest import OBJECTS, SUBJECTS, VERBS
from kg import load_settings
from kg.store import Store

HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parents[1]
QUERIES = ["which database did we pick?", "what is blocked?", "deadline", "TimescaleDB", "hotel",
           "integration tests", "who needs a weekly review?", "Lisbon office"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Recorder:
    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.count = 0

    async def call(self, client: httpx.AsyncClient, label: str, method: str, url: str, **kw: Any) -> None:
        self.count += 1
        start = time.perf_counter()
        try:
            r = await client.request(method, url, **kw)
            status = str(r.status_code) if r.status_code >= 400 else None
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        self.latencies[label].append((time.perf_counter() - start) * 1000)
        if status:
            self.errors[label][status] += 1

    def report(self, seconds: float) -> dict[str, Any]:
        out = {}
        for label, values in sorted(self.latencies.items()):
            values = sorted(values)
            out[label] = {
                "requests": len(values), "errors": sum(self.errors[label].values()),
                "errors_by_status": dict(self.errors[label]), "rps": round(len(values) / seconds, 2),
                "p50_ms": round(_percentile(values, 50), 1), "p95_ms": round(_percentile(values, 95), 1),
                "max_ms": round(values[-1], 1),
            }
        return out


def _percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def sentence(rng: random.Random, i: int) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})."


async def ingest_client(n: int, client: httpx.AsyncClient, base: str, rec: Recorder, until: float, cap: int,
                        batch: int) -> None:
    rng = random.Random(n)
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(days=n)
    i = 0
    while time.monotonic() < until and rec.count < cap:
        messages = [{"role": "user" if (i + j) % 2 == 0 else "assistant", "text": sentence(rng, i + j),
                     "ts": (t0 + timedelta(seconds=i + j)).isoformat(), "session_id": f"load-{n}-{(i + j) // 40}"}
                    for j in range(batch)]
        await rec.call(client, "POST /messages", "POST", f"{base}/messages", json={"messages": messages})
        if i % (batch * 5) == 0:
            await rec.call(client, "POST /facts", "POST", f"{base}/facts", json={
                "subject": f"client {n}", "predicate": "works_on", "object": rng.choice(SUBJECTS)})
        i += batch


async def read_client(n: int, client: httpx.AsyncClient, base: str, rec: Recorder, until: float, cap: int) -> None:
    rng = random.Random(1000 + n)
    while time.monotonic() < until and rec.count < cap:
        roll = rng.random()
        if roll < 0.45:
            await rec.call(client, "GET /search vector", "GET", f"{base}/search",
                           params={"q": rng.choice(QUERIES), "k": 10})
        elif roll < 0.75:
            await rec.call(client, "GET /search fulltext", "GET", f"{base}/search",
                           params={"q": rng.choice(QUERIES), "k": 10, "strategy": "fulltext"})
        elif roll < 0.9:
            await rec.call(client, "GET /facts", "GET", f"{base}/facts", params={"subject": f"client {n % 2}"})
        else:
            await rec.call(client, "GET /sessions", "GET", f"{base}/sessions", params={"limit": 20})


def start_server(port: int, key: str, namespace: str, log: IO[bytes]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KG_HTTP__KEYS": json.dumps({key: [namespace]}), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "uvicorn", "kg.http:default_app", "--factory", "--host", HOST,
                             "--port", str(port), "--log-level", "warning", "--no-access-log"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log)


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
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


async def run(seconds: float, ingest_clients: int, read_clients: int, batch: int, max_requests: int) -> dict[str, Any]:
    namespace = f"bench-load-{uuid.uuid4().hex[:8]}"
    key = secrets.token_urlsafe(24)
    port = free_port()
    url = f"http://{HOST}:{port}"
    log = tempfile.TemporaryFile()
    server = start_server(port, key, namespace, log)
    peak_rss = 0
    try:
        await wait_ready(server, url, log)
        base = f"{url}/v1/namespaces/{namespace}"
        limits = httpx.Limits(max_connections=ingest_clients + read_clients + 2)
        async with httpx.AsyncClient(headers={"X-API-Key": key}, timeout=60, limits=limits) as client:
            warm = Recorder()  # the first batch makes the namespace exist for the readers
            await ingest_client(99, client, base, warm, time.monotonic() + 0.001, 1, batch)
            rec = Recorder()
            start = time.monotonic()
            until = start + seconds
            proc = psutil.Process(server.pid)

            async def sample() -> None:
                nonlocal peak_rss
                while time.monotonic() < until and rec.count < max_requests:
                    peak_rss = max(peak_rss, proc.memory_info().rss)
                    await asyncio.sleep(1)

            await asyncio.gather(
                *(ingest_client(n, client, base, rec, until, max_requests, batch) for n in range(ingest_clients)),
                *(read_client(n, client, base, rec, until, max_requests) for n in range(read_clients)),
                sample())
            elapsed = time.monotonic() - start
            health = (await client.get(f"{url}/health")).status_code
    finally:
        stop_server(server)
        log.close()
        store = await Store.connect(load_settings())
        try:
            await store.autocommit("queries/namespace_delete", namespace=namespace)
        finally:
            await store.close()
    endpoints = rec.report(elapsed)
    return {
        "seconds": round(elapsed, 1), "target": f"{HOST} (uvicorn, 1 worker)", "namespace": namespace,
        "clients": {"ingest": ingest_clients, "read": read_clients}, "batch_messages": batch,
        "requests": sum(e["requests"] for e in endpoints.values()),
        "errors": sum(e["errors"] for e in endpoints.values()),
        "messages_ingested": endpoints.get("POST /messages", {}).get("requests", 0) * batch,
        "server_peak_rss_mb": round(peak_rss / 2**20, 1), "healthy_after": health == 200,
        "endpoints": endpoints,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60, help="How long to load (at most 600).")
    parser.add_argument("--ingest-clients", type=int, default=2)
    parser.add_argument("--read-clients", type=int, default=2)
    parser.add_argument("--batch", type=int, default=10, help="Messages per ingest request.")
    parser.add_argument("--max-requests", type=int, default=100_000, help="Stop after this many requests.")
    parser.add_argument("--json", action="store_true", help="Print only the JSON result.")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 600:
        parser.error("--seconds must be in (0, 600]")
    if not (1 <= args.ingest_clients <= 16 and 0 <= args.read_clients <= 16 and 1 <= args.batch <= 500):
        parser.error("1-16 ingest clients, 0-16 read clients, 1-500 messages per batch")
    result = asyncio.run(run(args.seconds, args.ingest_clients, args.read_clients, args.batch, args.max_requests))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['requests']} requests in {result['seconds']} s, {result['errors']} errors")
        for label, e in result["endpoints"].items():
            print(f"  {label:22} n={e['requests']:6}  p50 {e['p50_ms']:8.1f} ms  p95 {e['p95_ms']:8.1f} ms  "
                  f"errors {e['errors']}")
    return 0 if result["errors"] == 0 and result["healthy_after"] else 1


if __name__ == "__main__":
    sys.exit(main())
