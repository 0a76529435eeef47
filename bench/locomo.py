"""LoCoMo retrieval: the product's retriever against flat BM25 and flat dense, in the same run.

    python -m bench.locomo --data ../shared/data/locomo/locomo_dev.json --json

Each conversation is ingested into its own namespace on the configured Neo4j (idempotent: a
re-run writes nothing new), its sessions are summarized (the offline summarizer unless an LLM is
configured; `--summaries dataset` uses the dataset's own session summaries instead), then every
question of categories 1-4 is asked of each retriever. Reported per retriever:
- turn_recall@k: share of a question's evidence turns (dia_id = Turn.external_id) in the top k;
- session_recall@k: 1 when every evidence session is in the top k sessions (the product: its
  stage-1 ranking; the baselines: sessions by their best turn); session_recall_any@k: 1 when any is;
- p50/p95 latency of the turn query (embedding included).
And `http_search`: turn_recall@k and latency of what a user of the product gets by default, the
HTTP API's `GET /search` without a strategy (the app in process, over ASGI).
Namespaces are deleted at the end unless --keep.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from bench import arguments
from kg import AsyncMemory, load_settings
from kg.core.prompts.extraction import ChunkTurn
from kg.core.prompts.summaries import Part, SummaryDraft
from kg.ingest.loaders import Rejected, read_locomo

TURN_KS = (1, 5, 10, 20)
SESSION_KS = (1, 5, 10)
BASELINES = {"bm25": "bm25", "dense": "flat"}


class DatasetSummarizer:
    """The dataset's own session summaries (`session_<n>_summary`), for `--summaries dataset`."""

    model = "dataset"
    prompt_version = "locomo-session-summary"
    rollup_prompt_version = "locomo-session-summary"

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts

    async def summarize_turns(self, session_id: str, turns: list[ChunkTurn], embeddings: Any, open_: bool
                              ) -> SummaryDraft:
        return SummaryDraft(text=self.texts.get(session_id) or f"Session {session_id}.")

    async def rollup(self, session_id: str, parts: list[Part], open_: bool) -> SummaryDraft:
        return SummaryDraft(text=self.texts.get(session_id) or " ".join(p.text for p in parts))


def evidence_ids(raw: list[str]) -> list[str]:
    """dia_ids of a question; the dataset has a few malformed entries ("D8:6; D9:17", "D:11:26")."""
    out = []
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            part = part.replace("D:", "D")
            if re.fullmatch(r"D\d+:\d+", part):
                out.append(part)
    return out


def session_of(dia_id: str) -> str:
    return "session_" + dia_id.split(":")[0][1:]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


async def prepare(memory: AsyncMemory, data: Path, prefix: str, summaries: str, conversations: list[dict]) -> None:
    messages = [m for m in read_locomo(data, prefix) if not isinstance(m, Rejected)]
    await memory.ingest(messages)
    now = datetime.now(timezone.utc)
    for conv in conversations:
        namespace = f"{prefix}-{conv['sample_id']}"
        if summaries == "dataset":
            texts = {k.removesuffix("_summary"): v for k, v in (conv.get("session_summary") or {}).items()}
            memory.summarizer = DatasetSummarizer(texts)
        await memory.summarize_due(namespace, now=now)
    memory.summarizer = None


def answerable(prefix: str, conversations: list[dict]) -> Iterator[tuple[str, dict, list[str]]]:
    """(namespace, question, evidence turn ids) of every question with evidence; category 5
    (adversarial: no answer in the conversation) is left out."""
    for conv in conversations:
        for qa in conv["qa"]:
            evidence = evidence_ids(qa.get("evidence", []))
            if qa.get("category") != 5 and evidence:
                yield f"{prefix}-{conv['sample_id']}", qa, evidence


async def evaluate(memory: AsyncMemory, prefix: str, conversations: list[dict], recipe: str) -> dict[str, Any]:
    turn_hits = {k: [] for k in TURN_KS}
    session_hits = {k: [] for k in SESSION_KS}
    any_hits = {k: [] for k in SESSION_KS}
    latencies = []
    depth = max(TURN_KS)
    for namespace, qa, evidence in answerable(prefix, conversations):
        start = time.perf_counter()
        turns = await memory.retrieve(namespace, qa["question"], k=depth, recipe=recipe)
        latencies.append((time.perf_counter() - start) * 1000)
        found = [t.turn.external_id for t in turns]
        for k in TURN_KS:
            top = set(found[:k])
            turn_hits[k].append(sum(e in top for e in evidence) / len(evidence))
        sessions = await memory.search_sessions(namespace, qa["question"], k=max(SESSION_KS), recipe=recipe)
        ranked = [h.session.id for h in sessions]
        need = {session_of(e) for e in evidence}
        for k in SESSION_KS:
            session_hits[k].append(float(need <= set(ranked[:k])))
            any_hits[k].append(float(bool(need & set(ranked[:k]))))
    return {
        "turn_recall": _means(turn_hits),
        "session_recall": _means(session_hits),
        "session_recall_any": _means(any_hits),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
        "_questions": len(latencies),
    }


def _means(hits: dict[int, list[float]]) -> dict[str, float]:
    return {str(k): round(statistics.fmean(v), 4) for k, v in hits.items()}


async def evaluate_http(memory: AsyncMemory, prefix: str, conversations: list[dict]) -> dict[str, Any]:
    """Turn recall at the HTTP door's default: `GET /search?q=...&k=20`, no strategy."""
    import httpx

    from kg.http import create_app

    settings = memory.settings.model_copy(update={"http": memory.settings.http.model_copy(update={"keys": {}})})
    app = create_app(settings, memory=memory)
    turn_hits: dict[int, list[float]] = {k: [] for k in TURN_KS}
    latencies = []
    async with app.router.lifespan_context(app), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        for namespace, qa, evidence in answerable(prefix, conversations):
            start = time.perf_counter()
            r = await client.get(f"/v1/namespaces/{namespace}/search", params={"q": qa["question"],
                                                                              "k": max(TURN_KS)})
            latencies.append((time.perf_counter() - start) * 1000)
            r.raise_for_status()
            found = [h["turn"]["external_id"] for h in r.json()]
            for k in TURN_KS:
                turn_hits[k].append(sum(e in set(found[:k]) for e in evidence) / len(evidence))
    return {"turn_recall": _means(turn_hits), "p50_ms": round(percentile(latencies, 0.5), 2),
            "p95_ms": round(percentile(latencies, 0.95), 2), "questions": len(latencies)}


async def run(data: Path, summaries: str, keep: bool, prefix: str) -> dict[str, Any]:
    conversations = json.loads(data.read_text("utf-8"))
    async with AsyncMemory(load_settings()) as memory:
        try:
            await prepare(memory, data, prefix, summaries, conversations)
            await memory.retrieve(f"{prefix}-{conversations[0]['sample_id']}", "warm-up", k=5)  # not timed
            results = {"product": await evaluate(memory, prefix, conversations, memory.settings.memory.retrieval.strategy)}
            for name, recipe in BASELINES.items():
                results[name] = await evaluate(memory, prefix, conversations, recipe)
            http_search = await evaluate_http(memory, prefix, conversations)
        finally:
            if not keep:
                for conv in conversations:
                    await memory.delete_namespace(f"{prefix}-{conv['sample_id']}")
    questions = results["product"].pop("_questions")
    for r in results.values():
        r.pop("_questions", None)
    return {"questions": questions, "summaries": summaries, "retrievers": results, "http_search": http_search}


def main(argv: list[str] | None = None) -> int:
    parser = arguments.parser(__doc__, Path("../shared/data/locomo/locomo_dev.json"))
    parser.add_argument("--summaries", choices=("product", "dataset"), default="product")
    arguments.namespaces(parser, "bench-locomo", "conversation", "keep the namespaces afterwards")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    if arguments.absent(args.data, "LoCoMo", "../shared/data/locomo/README.md"):
        return 2
    prefix = args.prefix if args.summaries == "product" else f"{args.prefix}-ds"
    result = asyncio.run(run(args.data, args.summaries, args.keep, prefix))
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
