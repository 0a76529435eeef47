"""LongMemEval-S retrieval: the product's retriever beside BM25, before and after closing sessions.

    python -m bench.longmemeval --data ../shared/data/longmemeval/lme_s_dev.json.gz --json

Each question has its own haystack of dated user/assistant sessions; each goes into its own
namespace through the public `AsyncMemory` API (`--keep` keeps them, and a later run reuses what is
already there). Every question is asked at its own time (`question_date`, passed as `now`: relative
expressions such as "last month" resolve against it) of the configured strategy and of `bm25` (BM25
over the turns' own keys, sessions ranked by their best turn), once before and once after
`close_session` on every session. Reported, overall and by question type:
- session_recall_any@5 / session_recall_all@5: any / every evidence session in the top 5 sessions;
- turn_recall@10: share of the question's evidence turns (`has_answer`) in the top 10 turns;
- turn_hit@10: 1 when any evidence turn is in the top 10;
and what it costs: `close_session` seconds per 10 turns (p50 over sessions, and total), the first
search after a write (after each question's ingest and after its sessions closed: the namespace's
caches see new vectors; also by phase: "before" follows the ingest, "after" the closing) beside
warm searches, p50/p95, and apart from both the first search of a namespace a kept run reuses
(nothing written: the process reads it into its cache). A question whose sessions a kept run had
closed already has no "before closing" phase: it is counted (`questions_without_before`), not scored
as before. `--http` asks the HTTP door too
(`GET /search`, `GET /search/sessions`, the app in process over ASGI) after closing.

`--limit N` takes a stratified prefix: question types in turn, each in file order. `--rows` adds each
question's figures (per phase and retriever), to compare runs or phases question by question.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import statistics
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

from bench import arguments
from kg import AsyncMemory, load_settings
from kg.core.models.turns import Message

TURN_K = 10
SESSION_K = 5
TURN_SPACING = timedelta(seconds=30)
PHASES = ("before", "after")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def parse_date(text: str) -> datetime:
    """"2023/05/30 (Tue) 23:40" as UTC."""
    day, _, clock = text.partition(") ")
    return datetime.strptime(f"{day.split(' (')[0]} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=timezone.utc)


def stratified(questions: list[dict], limit: int | None) -> list[dict]:
    """Question types in turn (sorted by name), each in file order: a prefix keeps the mix."""
    by_type: dict[str, list[dict]] = defaultdict(list)
    for q in questions:
        by_type[q["question_type"]].append(q)
    out: list[dict] = []
    queues = [by_type[t] for t in sorted(by_type)]
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out[:limit] if limit else out


def session_ids(question: dict) -> list[str]:
    """The haystack's session ids, a repeated one made unique (the release lists a few distractors
    twice, with different dates)."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for sid in question["haystack_session_ids"]:
        seen[sid] += 1
        out.append(sid if seen[sid] == 1 else f"{sid}~{seen[sid]}")
    return out


def messages(question: dict, namespace: str) -> Iterator[Message]:
    """Every non-blank turn, `session:index` as its external id (blank turns are left out, as the
    API would refuse them)."""
    for sid, date, turns in zip(session_ids(question), question["haystack_dates"], question["haystack_sessions"]):
        start = parse_date(date)
        for i, turn in enumerate(turns):
            if turn["content"].strip():
                yield Message(namespace=namespace, session_id=sid, role=turn["role"], text=turn["content"],
                              ts=start + i * TURN_SPACING, external_id=f"{sid}:{i}")


def evidence(question: dict) -> tuple[set[str], set[str]]:
    """(evidence turn external ids, evidence session ids)."""
    turns = {f"{sid}:{i}" for sid, s in zip(session_ids(question), question["haystack_sessions"])
             for i, t in enumerate(s) if t.get("has_answer") and t["content"].strip()}
    return turns, set(question["answer_session_ids"])


def scores(found_turns: list[str], found_sessions: list[str], turns: set[str], sessions: set[str]) -> dict[str, float]:
    top_turns, top_sessions = set(found_turns[:TURN_K]), set(found_sessions[:SESSION_K])
    return {
        "session_recall_any@5": float(bool(sessions & top_sessions)),
        "session_recall_all@5": float(sessions <= top_sessions),
        "turn_recall@10": len(turns & top_turns) / len(turns) if turns else 1.0,
        "turn_hit@10": float(bool(turns & top_turns)) if turns else 1.0,
    }


class Run:
    def __init__(self, memory: AsyncMemory, prefix: str, retrievers: dict[str, str]) -> None:
        self.memory = memory
        self.prefix = prefix
        self.retrievers = retrievers
        self.rows: list[dict[str, Any]] = []  # one per question, phase and retriever
        self.first_ms: dict[str, list[float]] = {phase: [] for phase in PHASES}  # after ingest, after closing
        self.cold_ms: list[float] = []  # first searches of kept namespaces (nothing written)
        self.warm_ms: list[float] = []
        self.searched: set[str] = set()  # namespaces this process has searched
        self.without_before: list[str] = []  # questions whose sessions were closed before the run
        self.close_s: list[tuple[float, int]] = []  # (seconds, turns) per session
        self.ingest_s = 0.0
        self.ingested = 0

    def namespace(self, question: dict) -> str:
        return f"{self.prefix}-{question['question_id']}"

    async def ask(self, question: dict, recipe: str) -> tuple[list[str], list[str], float]:
        ns, now = self.namespace(question), parse_date(question["question_date"])
        start = time.perf_counter()
        turns = await self.memory.retrieve(ns, question["question"], k=TURN_K, recipe=recipe, now=now)
        elapsed = (time.perf_counter() - start) * 1000
        sessions = await self.memory.search_sessions(ns, question["question"], k=SESSION_K, recipe=recipe, now=now)
        return [t.turn.external_id or "" for t in turns], [h.session.id for h in sessions], elapsed

    async def evaluate(self, question: dict, phase: str, first: bool) -> None:
        turns, sessions = evidence(question)
        for name, recipe in self.retrievers.items():
            found_turns, found_sessions, ms = await self.ask(question, recipe)
            if name == "product":
                ns = self.namespace(question)
                if first or ns not in self.searched:  # the same search again, warm, beside it
                    (self.first_ms[phase] if first else self.cold_ms).append(ms)
                    ms = (await self.ask(question, recipe))[2]
                self.warm_ms.append(ms)
                self.searched.add(ns)
                first = False
            self.rows.append({"question": question["question_id"], "type": question["question_type"],
                              "phase": phase, "retriever": name, **scores(found_turns, found_sessions, turns, sessions)})

    async def prepare(self, question: dict) -> bool:
        """Ingest the haystack unless the namespace already holds it; True when something was written."""
        ns = self.namespace(question)
        wanted = list(messages(question, ns))
        start = time.perf_counter()
        report = await self.memory.ingest(wanted)
        if report.written:
            self.ingest_s += time.perf_counter() - start
            self.ingested += report.written
        return bool(report.written)

    async def statuses(self, question: dict) -> dict[str, str | None]:
        """Each of the question's sessions' status as stored (None: not stored), read once: a session
        closed already (a kept run's) leaves the question without a before phase."""
        ns = self.namespace(question)
        return {sid: (s.status if (s := await self.memory.session(ns, sid)) is not None else None)
                for sid in dict.fromkeys(session_ids(question))}

    async def close_all(self, question: dict, statuses: dict[str, str | None]) -> bool:
        """`close_session` on every stored session not closed yet (`statuses`); True when one was."""
        ns = self.namespace(question)
        closed = False
        for sid, status in statuses.items():
            if status is None or status == "closed":
                continue
            turns = len(await self.memory.turns(ns, sid))
            start = time.perf_counter()
            await self.memory.close_session(ns, sid)
            self.close_s.append((time.perf_counter() - start, turns))
            closed = True
        return closed

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for phase in PHASES:
            for name in self.retrievers:
                rows = [r for r in self.rows if r["phase"] == phase and r["retriever"] == name]
                if rows:
                    out.setdefault(phase, {})[name] = _table(rows)
        per_10 = [s / max(n, 1) * 10 for s, n in self.close_s]
        costs = {
            "close_s_per_10_turns_p50": round(percentile(per_10, 0.5), 4),
            "close_s_per_10_turns_mean": round(sum(s for s, _ in self.close_s) / max(1, sum(n for _, n in self.close_s)) * 10, 4),
            "sessions_closed": len(self.close_s),
            "first_search_after_write_ms": _latency([ms for phase in PHASES for ms in self.first_ms[phase]]),
            "first_search_after_write_ms_by_phase": {phase: _latency(self.first_ms[phase]) for phase in PHASES},
            "first_search_of_kept_namespace_ms": _latency(self.cold_ms),
            "warm_search_ms": _latency(self.warm_ms),
            "ingest_turns_per_s": round(self.ingested / self.ingest_s, 1) if self.ingest_s else None,
        }
        return {"metrics": out, "questions_without_before": len(self.without_before), "costs": costs}


def _latency(values: list[float]) -> dict[str, float | int]:
    return {"n": len(values), "p50": round(percentile(values, 0.5), 1), "p95": round(percentile(values, 0.95), 1),
            "max": round(max(values, default=0.0), 1)}


METRICS = ("session_recall_any@5", "session_recall_all@5", "turn_recall@10", "turn_hit@10")


def _table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def means(subset: list[dict[str, Any]]) -> dict[str, float]:
        return {m: round(statistics.fmean(r[m] for r in subset), 4) for m in METRICS} | {"n": len(subset)}

    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_type[r["type"]].append(r)
    return {"all": means(rows), "by_type": {t: means(v) for t, v in sorted(by_type.items())}}


async def evaluate_http(run: Run, questions: list[dict]) -> dict[str, Any]:
    """The HTTP door's default (`GET /search`, `GET /search/sessions`, no strategy), after closing."""
    import httpx

    from kg.http import create_app

    memory = run.memory
    settings = memory.settings.model_copy(update={"http": memory.settings.http.model_copy(update={"keys": {}})})
    app = create_app(settings, memory=memory)
    rows = []
    latencies = []
    async with app.router.lifespan_context(app), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        for q in questions:
            ns, now = run.namespace(q), parse_date(q["question_date"]).isoformat()
            start = time.perf_counter()
            r = await client.get(f"/v1/namespaces/{ns}/search", params={"q": q["question"], "k": TURN_K, "now": now})
            latencies.append((time.perf_counter() - start) * 1000)
            r.raise_for_status()
            s = await client.get(f"/v1/namespaces/{ns}/search/sessions",
                                 params={"q": q["question"], "k": SESSION_K, "now": now})
            s.raise_for_status()
            turns, sessions = evidence(q)
            found_turns = [h["turn"]["external_id"] for h in r.json()]
            found_sessions = [h["session"]["id"] for h in s.json()]
            rows.append({"type": q["question_type"], **scores(found_turns, found_sessions, turns, sessions)})
    return _table(rows) | {"search_ms": _latency(latencies)}


async def run(data: Path, limit: int | None, keep: bool, prefix: str, http: bool, rows: bool = False
              ) -> dict[str, Any]:
    with gzip.open(data, "rt", encoding="utf-8") as fh:
        questions = stratified(json.load(fh), limit)
    async with AsyncMemory(load_settings()) as memory:
        retrievers = {"product": memory.settings.memory.retrieval.strategy, "bm25": "bm25"}
        bench = Run(memory, prefix, retrievers)
        started = time.perf_counter()
        try:
            await memory.retrieve(f"{prefix}-warm-up", "warm-up", k=5)  # the model loads: not timed
            for i, q in enumerate(questions, start=1):
                wrote = await bench.prepare(q)
                statuses = await bench.statuses(q)
                if "closed" in statuses.values():
                    bench.without_before.append(q["question_id"])
                else:
                    await bench.evaluate(q, "before", first=wrote)
                closed = await bench.close_all(q, statuses)
                await bench.evaluate(q, "after", first=closed)
                print(f"[{i}/{len(questions)}] {q['question_id']} {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
            http_table = await evaluate_http(bench, questions) if http else None
        finally:
            if not keep:
                for q in questions:
                    await memory.delete_namespace(bench.namespace(q))
    result = {"questions": len(questions), "data": str(data), "strategy": retrievers["product"], **bench.summary()}
    if http_table is not None:
        result["http"] = http_table
    if rows:
        result["rows"] = bench.rows
    return result


def main(argv: list[str] | None = None) -> int:
    parser = arguments.parser(__doc__, Path("../shared/data/longmemeval/lme_s_dev.json.gz"))
    parser.add_argument("--limit", type=int, default=None, help="a stratified prefix of N questions")
    arguments.namespaces(parser, "bench-lme", "question", "keep the namespaces (a later run reuses them)")
    parser.add_argument("--http", action="store_true", help="ask the HTTP door too, after closing")
    parser.add_argument("--rows", action="store_true",
                        help="add each question's figures (per phase and retriever) as `rows`")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    if arguments.absent(args.data, "LongMemEval", "../shared/data/longmemeval/README.md"):
        return 2
    result = asyncio.run(run(args.data, args.limit, args.keep, args.prefix, args.http, args.rows))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
