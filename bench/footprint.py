"""Install size, cold starts, serve RSS and embedder speed: the default (int8 ONNX) embedder beside
the torch one, in one run.

    python -m bench.footprint --json                  # everything, 10k turns, 3 runs each
    python -m bench.footprint --short --json          # a smoke test: 300 turns, 1 run, no installs

Per variant (`[embedding] provider = "local"`, then `"sentence-transformers"`):
- `install`: `pip install .`, `pip install '.[server]'` and `'.[server,local,late]'` (what `make demo`
  installs: the local Neo4j's Java and late interaction's model) (torch: `'.[torch]'`, `'.[server,torch]'`)
  of this checkout in a fresh python3.11 venv under a temp folder: site-packages MB, the 10 largest
  distributions (a dist-info counted with its files), and whether torch / nvidia-* / triton came in.
  pip's cache makes repeats fast; `--skip-install` leaves it out.
- `serve`: `kg serve` on 127.0.0.1, peak RSS of the API process and of its worker process (each, by
  psutil), after a warm-up of searches and after `--turns` turns through `POST .../messages`.
- `cold`: with no `kg serve` running, wall and CPU (user+sys of the child) and peak RSS of
  `kg --help` and `kg search -n NS "..." --local`; `kg mcp` over stdio with the official client:
  seconds from spawn to `initialize` answered and to the first `search_turns` answer. Median of
  `--runs` runs each.
- `embedder`: in a process of its own, the product's embedder on LoCoMo turn keys (synthetic
  sentences without the data set): load seconds, batch turns/s, single-query p50/p95.

Each variant has its own managed Neo4j (the embedding space is per database) in a temp folder, on
ports 7691/7481 and 7692/7482, started here and stopped at the end. Children get their settings
through the environment (the password too, never on a command line). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx

from bench.footprint_parts import (
    REPO,
    RssSampler,
    corpus,
    embedder_in_child,
    install_report,
    mcp_cold,
    measure_embedder,
    median_runs,
    progress,
    timed,
)
from bench.load import HOST, free_port, stop_server, wait_ready
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.settings.tree import LocalServerSettings

VARIANTS = {  # name: (provider, install specs, bolt port, http port)
    "onnx-int8 (default)": ("local", [".", ".[server]", ".[server,local,late]"], 7691, 7481),
    "torch": ("sentence-transformers", [".[torch]", ".[server,torch]"], 7692, 7482),
}
NAMESPACE = "bench-footprint"
QUESTION = "which database did we pick for the metrics?"
BATCH = 100  # messages per POST


def child_env(provider: str, neo4j: LocalNeo4j, password: str) -> dict[str, str]:
    """This process's environment without its own database, plus the variant's server and provider."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_NEO4J__")}
    local = neo4j.settings
    return {**env, "PYTHONPATH": str(REPO), "KG_EMBEDDING__PROVIDER": provider,
            "KG_NEO4J__URI": f"bolt://127.0.0.1:{local.bolt_port}", "KG_NEO4J__PASSWORD": password,
            "KG_NEO4J__LOCAL__DATA_DIR": str(local.data_dir), "KG_NEO4J__LOCAL__BOLT_PORT": str(local.bolt_port),
            "KG_NEO4J__LOCAL__HTTP_PORT": str(local.http_port)}


async def post_turns(base: str, key: str, turns: int) -> dict[str, Any]:
    """`turns` messages in sessions of 40, `BATCH` a request, two requests in flight. A request the
    server refuses (backpressure: 429/503 with Retry-After) is sent again after the wait it names,
    as `kg.Client` does; the refusals are counted."""
    keys, _, source = corpus(min(turns, 6000), 0)
    start = datetime.now(timezone.utc) - timedelta(days=30)
    gate = asyncio.Semaphore(2)
    refused = 0

    async def send(client: httpx.AsyncClient, first: int) -> None:
        messages = [{"role": "user" if i % 2 == 0 else "assistant", "text": f"{keys[i % len(keys)]} (#{i})",
                     "ts": (start + timedelta(seconds=10 * i)).isoformat(), "session_id": f"s-{i // 40}"}
                    for i in range(first, min(first + BATCH, turns))]
        nonlocal refused
        async with gate:
            while True:
                r = await client.post(base + "/messages", json={"messages": messages})
                if r.status_code not in (429, 503) or "retry-after" not in r.headers:
                    break
                refused += 1
                await asyncio.sleep(min(float(r.headers["retry-after"]), 10.0))
            r.raise_for_status()
        if first // BATCH % 10 == 0:
            progress(f"  posted {first + len(messages)}/{turns} turns")

    started = time.perf_counter()
    async with httpx.AsyncClient(headers={"X-API-Key": key}, timeout=600) as client:
        await asyncio.gather(*(send(client, first) for first in range(0, turns, BATCH)))
    seconds = time.perf_counter() - started
    return {"turns": turns, "source": source, "seconds": round(seconds, 1), "turns_per_s": round(turns / seconds, 1),
            "refused_then_resent": refused}


async def serve_rss(env: dict[str, str], turns: int, log: Path) -> dict[str, Any]:
    port, key = free_port(), secrets.token_urlsafe(24)
    url, base = f"http://{HOST}:{port}", f"http://{HOST}:{port}/v1/namespaces/{NAMESPACE}"
    with open(log, "w+b") as out:
        server = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "--host", HOST, "--port", str(port)],
                                  cwd=REPO, env={**env, "KG_HTTP__KEYS": json.dumps({key: [NAMESPACE]})},
                                  stdout=out, stderr=out)
        sampler = RssSampler(server.pid)
        try:
            started = time.perf_counter()
            await wait_ready(server, url, out)
            ready_s = time.perf_counter() - started
            async with httpx.AsyncClient(headers={"X-API-Key": key}, timeout=120) as client:
                warm = {"role": "user", "text": "We picked TimescaleDB for the metrics.", "session_id": "warm-up",
                        "ts": (datetime.now(timezone.utc) - timedelta(days=31)).isoformat()}
                (await client.post(base + "/messages", json={"messages": [warm]})).raise_for_status()
                for q in (QUESTION, "deadline", "hotel", "who moved to Lisbon?"):
                    (await client.get(base + "/search", params={"q": q, "k": 10})).raise_for_status()
            sampler.mark("after_warm_up")
            ingested = await post_turns(base, key, turns)
            await asyncio.sleep(5)  # the worker process picks up the jobs the ingest made
            sampler.mark(f"after_{turns}_turns")
        finally:
            sampler.close()
            stop_server(server)
    return {"ready_s": round(ready_s, 1), "ingest": ingested, "peak_rss": sampler.marks}


def cold(env: dict[str, str], runs: int) -> dict[str, Any]:
    py = [sys.executable, "-m", "kg.cli"]
    out: dict[str, Any] = {}
    progress("  kg --help")
    out["kg_help"] = median_runs([timed([*py, "--help"], env) for _ in range(runs)])
    progress("  kg search --local (cold, no serve)")
    out["kg_search_cold"] = median_runs([timed([*py, "search", QUESTION, "-n", NAMESPACE, "--local"], env)
                                         for _ in range(runs)])
    progress("  kg mcp over stdio")
    out["mcp_stdio"] = median_runs([asyncio.run(mcp_cold(env, NAMESPACE, QUESTION)) for _ in range(runs)])
    return out


def run_variant(name: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    provider, specs, bolt, http = VARIANTS[name]
    result: dict[str, Any] = {"provider": provider}
    if not args.skip_install:
        result["install"] = {}
        for spec in specs:
            progress(f"{name}: pip install '{spec}' in a fresh venv")
            result["install"][spec] = install_report(spec, tmp / f"venv-{bolt}-{len(result['install'])}")
    data_dir = tmp / f"neo4j-{bolt}"
    neo4j = LocalNeo4j(LocalServerSettings(data_dir=data_dir, bolt_port=bolt, http_port=http, heap=args.heap))
    progress(f"{name}: starting Neo4j on {bolt}")
    neo4j.start(echo=progress)
    try:
        env = child_env(provider, neo4j, neo4j.password() or "")
        progress(f"{name}: kg serve, {args.turns} turns over HTTP")
        result["serve"] = asyncio.run(serve_rss(env, args.turns, tmp / f"serve-{bolt}.log"))
        progress(f"{name}: cold starts, {args.runs} run(s) each")
        result["cold"] = cold(env, args.runs)
    finally:
        neo4j.stop(echo=progress)
    progress(f"{name}: embedder alone")
    result["embedder"] = embedder_in_child(provider, args.embed_turns, args.queries, env)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000, help="Turns posted to kg serve.")
    parser.add_argument("--runs", type=int, default=3, help="Runs of each cold start (the median is reported).")
    parser.add_argument("--embed-turns", type=int, default=2000, help="Turns in the embedder's batch.")
    parser.add_argument("--queries", type=int, default=200, help="Single queries timed per embedder.")
    parser.add_argument("--skip-install", action="store_true", help="Leave out the fresh-venv installs.")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="Comma-separated, of: " + ", ".join(VARIANTS))
    parser.add_argument("--heap", default="512m", help="Heap of each bench Neo4j.")
    parser.add_argument("--short", action="store_true",
                        help="Smoke test: 300 turns, 1 run, 200 embedded turns, 20 queries, no installs.")
    parser.add_argument("--json", action="store_true", help="Print only the JSON (progress still goes to stderr).")
    parser.add_argument("--embedder-child", help=argparse.SUPPRESS)  # the child of the embedder part
    args = parser.parse_args(argv)
    if args.embedder_child:
        print(json.dumps(measure_embedder(args.embedder_child, args.embed_turns, args.queries)))
        return 0
    if args.short:
        args.turns, args.runs, args.embed_turns, args.queries, args.skip_install = 300, 1, 200, 20, True
    names = args.variants.split(",")
    if unknown := [n for n in names if n not in VARIANTS]:
        parser.error(f"--variants: unknown {unknown}; choose from {list(VARIANTS)}")
    if args.turns < 1 or args.runs < 1 or args.embed_turns < 1 or args.queries < 1:
        parser.error("--turns, --runs, --embed-turns and --queries must each be at least 1")
    started, load = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kg-footprint-") as tmp:
        variants = {}
        for name in names:
            variants[name] = run_variant(name, args, Path(tmp))
            progress(f"{name} done: {json.dumps(variants[name])}")  # kept if a later variant fails
    result = {"python": sys.version.split()[0], "cores": os.cpu_count(),
              "load_average": [round(load, 1), round(os.getloadavg()[0], 1)],
              "seconds": round(time.perf_counter() - started), "turns": args.turns, "runs": args.runs,
              "variants": variants}
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
