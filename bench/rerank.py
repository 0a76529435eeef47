"""What the cross-encoder rerank stage costs on this machine, per query, at top 10, 20 and 50.

    python -m bench.rerank --json

The timed model is the stage's default, the `rerank` extra's cross-encoder/ms-marco-MiniLM-L-12-v2
in int8 ONNX (`kg.queries.rerank.BUNDLED_CROSS_ENCODER`), through
`kg.queries.rerank.CrossEncoderReranker` as a search calls it. The pairs are LoCoMo questions with
turns of their conversation ("Speaker: text"), so the lengths are realistic. The embedding of one
query, timed in the same process, is the baseline to read the noise against.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.locomo import percentile
from kg.core.embedders.onnx import OnnxMiniLM
from kg.core.settings.tree import EmbeddingSettings
from kg.queries.rerank import BUNDLED_CROSS_ENCODER, CrossEncoderReranker


def pairs(data: Path, queries: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    """(question, 50 turns of its conversation) for `queries` questions of categories 1-4."""
    rng = random.Random(seed)
    out = []
    for conv in json.loads(data.read_text()):
        c = conv["conversation"]
        turns = [f"{t['speaker']}: {t['text']}" for key, v in c.items()
                 if key.startswith("session_") and isinstance(v, list) for t in v]
        for qa in conv["qa"]:
            if qa.get("category") != 5:
                out.append((qa["question"], rng.sample(turns, 50)))
    rng.shuffle(out)
    return out[:queries]


def timed_ms(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - start) * 1000


def run(data: Path, queries: int) -> dict[str, Any]:
    asked = pairs(data, queries)
    embedder = OnnxMiniLM(EmbeddingSettings())
    embedder.load()
    reranker = CrossEncoderReranker(BUNDLED_CROSS_ENCODER)
    start = time.perf_counter()
    reranker.load()
    load_s = time.perf_counter() - start
    reranker.scores(asked[0][0], asked[0][1][:20])  # warm-up
    embedder.embed([asked[0][0]])
    result: dict[str, Any] = {"model": reranker.name, "queries": len(asked), "load_s": round(load_s, 2)}
    embed = [timed_ms(embedder.embed, [q]) for q, _ in asked]
    result["baseline_query_embedding_ms"] = {"p50": round(statistics.median(embed), 1),
                                             "p95": round(percentile(embed, 0.95), 1)}
    for n in (10, 20, 50):
        ms = [timed_ms(reranker.scores, q, turns[:n]) for q, turns in asked]
        result[f"top{n}_ms"] = {"p50": round(statistics.median(ms), 1), "p95": round(percentile(ms, 0.95), 1),
                                "per_candidate_p50": round(statistics.median(ms) / n, 2)}
    asyncio.run(reranker.aclose())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo_dev.json"))
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.data, args.queries)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
