"""Post-session indexing: a closed session's turns -> extraction -> the graph.

`index_session` reads the session's turns, routes them to one extraction request or to
turn-boundary chunks with overlap (`[memory.indexing] chunk_token_budget`, `chunk_overlap`),
extracts every chunk, merges the answers, and hands the result to `SessionGraphWriter`, which
writes it in one transaction. When the extractor gives up (`ExtractionFailed`), nothing is
written: the session is marked `extraction_failed` with the redacted reason and its failure
count, its turns are untouched, and `index_pending` tries it again later.

`index_pending` indexes the sessions that are closed (by `close_session`, or idle for
`[session] idle_minutes`) and not indexed by the current extractor version (backend, model,
prompt), grown since, or failed fewer than `[memory.indexing] max_failures` times.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Any, Awaitable, Callable, Protocol

from kg.core.llm.usage import metering
from kg.core.models.indexing import IndexReport, SessionIndexReport
from kg.core.models.values import native
from kg.core.prompts.extraction import ChunkInput, ChunkTurn, ExtractionResult
from kg.core.settings.tree import Settings
from kg.core.store.store import Store

from .extraction.chunking import chunks_for
from .extraction.extractor import ExtractionFailed, Extractor, Usage
from .extraction.merging import merge
from .session_graph import Provenance, SessionGraphWriter, Written

log = logging.getLogger(__name__)


class Steps(Protocol):
    """Where extraction keeps its passes: a job's saved `pass_outputs` (`kg.jobs.queue.JobRun`), so a
    retried attempt asks only for the chunks not answered yet; or memory alone (`OneAttempt`)."""

    passes: dict[str, Any]

    async def step(self, name: str, work: Callable[[], Awaitable[Any]]) -> Any: ...


class OneAttempt:
    """Passes held for one attempt only (a direct `index_session`)."""

    def __init__(self) -> None:
        self.passes: dict[str, Any] = {}

    async def step(self, name: str, work: Callable[[], Awaitable[Any]]) -> Any:
        if name not in self.passes:
            self.passes[name] = await work()
        return self.passes[name]


class PlanGone(KeyError):
    """The session has no turns, or a turn of a saved plan no longer exists: retrying cannot help."""

    def __str__(self) -> str:  # KeyError would repr the message
        return str(self.args[0]) if self.args else ""


class SessionIndexer:
    def __init__(self, store: Store, settings: Settings, extractor: Extractor, writer: SessionGraphWriter,
                 adjudicator: Any = None) -> None:
        self.store = store
        self.settings = settings
        self.extractor = extractor
        self.writer = writer
        self.adjudicator = adjudicator

    def provenance(self) -> Provenance:
        e = self.extractor
        return Provenance(e.backend, e.model, e.prompt_version)

    async def index_session(self, namespace: str, session_id: str, steps: Steps | None = None,
                            raise_failure: bool = False, turns: dict[str, ChunkTurn] | None = None,
                            ) -> SessionIndexReport:
        """Extract the session (every chunk a pass of `steps`) and write the merged result in one
        transaction. A failed extraction writes nothing and marks the session `extraction_failed`:
        the failed report is returned, or with `raise_failure` the `ExtractionFailed` is raised."""
        turns = turns if turns is not None else await session_turns(self.store, namespace, session_id)
        provenance = self.provenance()
        own = steps is None
        with metering() as meter:
            try:
                result, unmetered, chunks, calls = await extract(self.settings, self.extractor, namespace, session_id,
                                                                 turns, steps or OneAttempt())
            except ExtractionFailed as failed:
                # a job's answered chunks are counted when they are written, from its saved passes
                report = _report(namespace, session_id, provenance, 0)
                failed_report = await self._failed(report, meter.summary()["calls"] if own else [], failed, provenance)
                if raise_failure:
                    raise
                return failed_report
        return await self.write_extracted(namespace, session_id, result, unmetered, chunks, turns, calls=calls)

    async def write_extracted(
        self, namespace: str, session_id: str, result: ExtractionResult, usage: Usage = Usage(), chunks: int = 0,
        turns: dict[str, ChunkTurn] | None = None, calls: list[dict[str, Any]] | None = None,
    ) -> SessionIndexReport:
        """Write an extraction made elsewhere (e.g. a job's resumable per-chunk passes) as `index_session`
        would: one transaction, stamped with this indexer's extractor. `calls`: the LLM calls the
        extraction made (records of `kg.core.llm.usage`); `usage` counts extraction calls not recorded
        (an extractor outside the transport). The write's own calls (judges, adjudication) are
        metered here; the sum is reported and added to the session."""
        turns = turns if turns is not None else await session_turns(self.store, namespace, session_id)
        provenance = self.provenance()
        report = _report(namespace, session_id, provenance, chunks)
        with metering() as meter:
            written = await self.writer.write(namespace, session_id, turns, result, provenance)
        await self._cost(report, [*(calls or []), *meter.summary()["calls"]], usage)
        log.info("indexed session %s/%s: %s", namespace, session_id, written)
        return _counts(report, written)

    async def index_pending(self, namespace: str | None = None, limit: int | None = None) -> IndexReport:
        """Index due sessions one after the other; a failing one is reported and the run goes on."""
        cfg = self.settings
        idle_before = datetime.now(timezone.utc) - timedelta(minutes=cfg.session.idle_minutes)
        rows = await self.store.read(
            "sessions/pending_index", namespace=namespace, idle_before=idle_before,
            version=self.provenance().version, max_failures=cfg.memory.indexing.max_failures,
            limit=limit if limit is not None else 1_000_000)
        report = IndexReport()
        for row in rows:
            report.sessions.append(await self.index_session(row["namespace"], row["id"]))
        return report

    async def _failed(self, report: SessionIndexReport, calls: list[dict[str, Any]], failed: ExtractionFailed,
                      provenance: Provenance) -> SessionIndexReport:
        error = str(failed)  # the reason is redacted by the extractor; this adds backend, model, attempts
        rows = await self.store.write(
            "sessions/extraction_failed", namespace=report.namespace, session_id=report.session_id,
            error=error, requests=failed.attempts, now=datetime.now(timezone.utc), version=provenance.version)
        await self._cost(report, calls)
        report.status, report.error = "extraction_failed", error
        report.failures = rows[0]["failures"] if rows else 0
        log.warning("extraction of session %s/%s failed (%d time(s)): %s", report.namespace, report.session_id,
                    report.failures, error)
        return report

    async def _cost(self, report: SessionIndexReport, calls: list[dict[str, Any]], unmetered: Usage = Usage()) -> None:
        """The report's cost from the call records (every purpose), summed on the session too."""
        report.calls = calls
        report.llm_calls = len(calls) + unmetered.calls
        report.input_tokens = sum(c["input_tokens"] for c in calls) + unmetered.input_tokens
        report.output_tokens = sum(c["output_tokens"] for c in calls) + unmetered.output_tokens
        if report.llm_calls:
            await self.store.write("sessions/add_llm_usage", namespace=report.namespace,
                                   session_id=report.session_id, llm_calls=report.llm_calls,
                                   input_tokens=report.input_tokens, output_tokens=report.output_tokens)


def _report(namespace: str, session_id: str, provenance: Provenance, chunks: int) -> SessionIndexReport:
    return SessionIndexReport(namespace=namespace, session_id=session_id, status="indexed",
                              extractor=provenance.extractor, model=provenance.model,
                              prompt_version=provenance.prompt_version, chunks=chunks)


def _counts(report: SessionIndexReport, written: Written) -> SessionIndexReport:
    return report.model_copy(update=vars(written))


async def session_turns(store: Store, namespace: str, session_id: str) -> dict[str, ChunkTurn]:
    """A session's turns by id, as extraction reads them; `PlanGone` when it has none."""
    rows = await store.read("sessions/turns", namespace=namespace, session_id=session_id)
    if not rows:
        raise PlanGone(f"session {session_id!r} of namespace {namespace!r} has no turns")
    return {
        t["id"]: ChunkTurn(id=t["id"], idx=t["idx"], role=t["role"], speaker=t["speaker"], text=t["text"],
                           ts=native(t["ts"]), trust=t.get("trust") or "trusted")
        for t in (r["turn"] for r in rows)
    }


async def extract(
    settings: Settings, extractor: Extractor, namespace: str, session_id: str, turns: dict[str, ChunkTurn],
    steps: Steps,
) -> tuple[ExtractionResult, Usage, int, list[dict[str, Any]]]:
    """Extraction as resumable passes: `plan` fixes which turns each chunk holds, `chunk-NNNN`
    keeps each chunk's answer, so a retry after a crash or an LLM failure asks only for the chunks
    not answered yet. Returns the merged result, the cost of answers the meter did not record (an
    extractor outside the LLM transport), the chunk count and the metered calls; nothing is written
    to the graph. Saved passes of another extractor (the configuration changed between attempts)
    are dropped."""
    made_by = {"backend": extractor.backend, "model": extractor.model, "prompt_version": extractor.prompt_version}
    if steps.passes.get("plan") and {k: steps.passes["plan"].get(k) for k in made_by} != made_by:
        steps.passes.clear()

    async def plan() -> dict[str, Any]:
        ordered = sorted(turns.values(), key=lambda t: t.idx)
        chunks = chunks_for(settings.memory.indexing, session_id, ordered, namespace)
        return {**made_by, "chunks": [[t.id for t in c.turns] for c in chunks]}

    planned = await steps.step("plan", plan)
    results, unmetered, count = [], Usage(), len(planned["chunks"])
    calls: list[dict[str, Any]] = []
    for i, ids in enumerate(planned["chunks"]):
        chunk = _planned_chunk(settings, namespace, session_id, [_turn(turns, id) for id in ids], i, count)

        async def ask(chunk: ChunkInput = chunk) -> dict[str, Any]:
            with metering() as meter:
                result, cost = await extractor.extract(chunk)
            return {"result": result.model_dump(mode="json"), "usage": cost.__dict__,
                    "calls": meter.summary()["calls"]}

        saved = await steps.step(f"chunk-{i:04d}", ask)
        results.append(ExtractionResult.model_validate(saved["result"]))
        calls += saved.get("calls", [])
        cost = Usage(**saved["usage"])
        unmetered = unmetered + Usage(max(0, cost.calls - len(saved.get("calls", []))), 0, 0)
    return merge(results), unmetered, count, calls


def _planned_chunk(settings: Settings, namespace: str, session_id: str, turns: list[ChunkTurn], index: int,
                   count: int) -> ChunkInput:
    """The chunk a plan names, its turns fitted to the token budget as in the first attempt."""
    fitted = chunks_for(settings.memory.indexing, session_id, turns, namespace)
    seen: dict[str, ChunkTurn] = {t.id: t for c in fitted for t in c.turns}
    return ChunkInput(session_id=session_id, namespace=namespace,
                      turns=sorted(seen.values(), key=lambda t: t.idx), chunk_index=index, chunk_count=count)


def _turn(turns: dict[str, ChunkTurn], id: str) -> ChunkTurn:
    t = turns.get(id)
    if t is None:  # a turn of the saved plan is gone: the session was deleted or rewritten
        raise PlanGone(f"turn {id} of the saved extraction plan no longer exists")
    return t
