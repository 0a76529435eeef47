"""The measurements of `bench.footprint`, each on its own: a fresh venv's site-packages, a cold
child process's wall and CPU time, MCP over stdio from spawn, and an embedder in a process of its
own. The orchestration (variants, their Neo4j servers, `kg serve`) is in `bench/footprint.py`."""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import psutil

from bench.locomo import percentile

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
HEAVY = ("torch", "triton", "nvidia-")  # what the default install must not bring


def progress(message: str) -> None:
    print(f"[footprint {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _tree_rss(proc: psutil.Process) -> int:
    try:
        return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
    except psutil.NoSuchProcess:
        return 0


# --- site-packages of a fresh venv ---------------------------------------------------------------

def _dist_sizes(site: Path) -> dict[str, int]:
    """Bytes per installed distribution (its files by the dist-info's RECORD, the dist-info with
    them); files no RECORD lists count under their top-level folder."""
    sizes: dict[str, int] = defaultdict(int)
    owned: set[Path] = set()
    for record in site.glob("*.dist-info/RECORD"):
        name = record.parent.name.split("-")[0].lower().replace("_", "-")
        for line in record.read_text(errors="replace").splitlines():
            path = (site / line.split(",")[0]).resolve() if line else None
            if path is None or path in owned or not path.is_file() or site not in path.parents:
                continue
            owned.add(path)
            sizes[name] += path.lstat().st_size
    for root, _, files in os.walk(site):
        for f in files:
            path = Path(root, f)
            if path.resolve() not in owned:
                sizes[path.relative_to(site).parts[0] + " (unlisted)"] += path.lstat().st_size
    return dict(sizes)


def install_report(spec: str, venv: Path) -> dict[str, Any]:
    """`pip install <spec>` of this checkout in a fresh python3.11 venv: site-packages bytes, the 10
    largest distributions, whether torch / nvidia-* / triton came in."""
    started = time.perf_counter()
    subprocess.run(["python3.11", "-m", "venv", str(venv)], check=True)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", spec], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        return {"spec": spec, "error": done.stderr.strip()[-1500:]}
    site = next(venv.glob("lib/python3.*/site-packages"))
    sizes = _dist_sizes(site)
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:10]
    return {"spec": spec, "install_s": round(time.perf_counter() - started, 1),
            "site_packages_mb": round(sum(sizes.values()) / 1e6, 1), "distributions": len(sizes),
            "largest_mb": {name: round(size / 1e6, 1) for name, size in largest},
            "heavy_present": sorted(n for n in sizes if n.startswith(HEAVY))}


# --- a cold child process ------------------------------------------------------------------------

def timed(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Wall time, CPU (user+sys of the child, from RUSAGE_CHILDREN) and peak RSS (sampled) of one run."""
    cpu0, start = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ps, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(ps))
        time.sleep(0.02)
    wall = time.perf_counter() - start
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:])} exited {proc.returncode}: {err.decode(errors='replace')[-1500:]}")
    return {"wall_s": wall, "cpu_s": _children_cpu() - cpu0, "peak_rss_mb": peak / 2**20}


def median_runs(runs: list[dict[str, float]]) -> dict[str, Any]:
    keys = runs[0].keys()
    return {**{k: round(statistics.median(r[k] for r in runs), 3) for k in keys},
            "runs": [{k: round(v, 3) for k, v in r.items()} for r in runs]}


async def mcp_cold(env: dict[str, str], namespace: str, query: str) -> dict[str, float]:
    """Spawn `kg mcp` over stdio with the official client: seconds to `initialize` answered, to the
    first `search_turns` answer, the CPU the process used, and its peak RSS."""
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    peak = 0
    params = StdioServerParameters(command=sys.executable, args=["-m", "kg.cli", "mcp", "-n", namespace],
                                   cwd=str(REPO), env=env)
    stop = asyncio.Event()

    async def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, sum(_tree_rss(p) for p in me.children() if p.pid not in before))
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    cpu0, start = _children_cpu(), time.perf_counter()
    async with Client(params) as client:
        initialized = time.perf_counter() - start
        result = await client.call_tool("search_turns", {"namespace": namespace, "query": query, "k": 10})
        answered = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(f"search_turns failed: {result.content}")
    stop.set()
    await sampler
    await asyncio.sleep(0.2)  # the client reaps the process on exit; its CPU is then counted
    return {"initialize_s": initialized, "first_search_s": answered, "cpu_s": _children_cpu() - cpu0,
            "peak_rss_mb": peak / 2**20}


# --- an embedder in a process of its own -----------------------------------------------------------

def corpus(turns: int, queries: int) -> tuple[list[str], list[str], str]:
    """LoCoMo turn keys and questions when the data set is here, synthetic sentences otherwise."""
    if LOCOMO.is_file():
        from bench.embedders import conversations

        convs = conversations(LOCOMO)
        keys = [k for _, ks, _ in convs for k in ks]
        questions = [q for _, _, qs in convs for q, _ in qs]
        return keys[:turns], questions[:queries], f"LoCoMo dev ({LOCOMO.name})"
    from bench.load import sentence

    rng = random.Random(23)
    return ([sentence(rng, i) for i in range(turns)], [f"what about note {i}?" for i in range(queries)],
            "synthetic sentences")


def measure_embedder(provider: str, turns: int, queries: int) -> dict[str, Any]:
    """Load time, batch turns/s (the product's `embed` on the whole list) and single-query p50/p95."""
    from kg.core.embedders.configured import embedder_for
    from kg.core.settings.tree import EmbeddingSettings

    keys, questions, source = corpus(turns, queries)
    start = time.perf_counter()
    model = embedder_for(EmbeddingSettings(provider=provider))
    model.embed(["warm-up passage", "another one"]), model.embed(["warm-up query?"])
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    model.embed(keys)
    batch_s = time.perf_counter() - start
    latencies = []
    for q in questions:
        t0 = time.perf_counter()
        model.embed([q])
        latencies.append((time.perf_counter() - t0) * 1000)
    hwm = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
               if line.startswith("VmHWM:"))
    return {"provider": provider, "name": model.name, "source": source, "turns": len(keys),
            "batch_turns_per_s": round(len(keys) / batch_s, 1), "queries": len(latencies),
            "query_ms_p50": round(percentile(latencies, 0.5), 2), "query_ms_p95": round(percentile(latencies, 0.95), 2),
            "load_s": round(load_s, 2), "peak_rss_mb": round(hwm / 1024, 1)}


def embedder_in_child(provider: str, turns: int, queries: int, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "bench.footprint", "--embedder-child", provider,
                           "--embed-turns", str(turns), "--queries", str(queries)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"provider": provider, "error": done.stderr.strip()[-1500:]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


class RssSampler:
    """Peak RSS of `kg serve`'s API process and, apart, of its children (the worker process), every
    0.25 s on a thread; `mark(label)` keeps the peaks so far under that label."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.api = self.worker = 0
        self.marks: dict[str, dict[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                api = self.proc.memory_info().rss
                worker = sum(p.memory_info().rss for p in self.proc.children(recursive=True))
            except psutil.NoSuchProcess:
                api = worker = 0
            self.api, self.worker = max(self.api, api), max(self.worker, worker)
            time.sleep(0.25)

    def mark(self, label: str) -> None:
        time.sleep(0.5)
        self.marks[label] = {"api_mb": round(self.api / 2**20, 1), "worker_mb": round(self.worker / 2**20, 1),
                             "total_mb": round((self.api + self.worker) / 2**20, 1)}

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
