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
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, AsyncIterator

from ingest.corrections.writer import CorrectionWriter
from ingest.dedup.neo4j_resolver import GraphResolver
from ingest.extraction.chunking import chunks_for, merge
from ingest.extraction.extractor import ExtractionFailed, Extractor, Usage
from ingest.extraction.models import ChunkTurn, ExtractionResult
from ingest.facts import FactWriter
from ingest.relationships import RelationshipWriter
from ingest.session_graph import Provenance, SessionGraphWriter, Written
from kg.config import Settings
from kg.indexing_models import IndexReport, SessionIndexReport
from kg.llm_usage import metering
from kg.store import Store

if TYPE_CHECKING:
    from kg.memory import AsyncMemory

log = logging.getLogger(__name__)


def _native(value: Any) -> Any:
    return value.to_native() if hasattr(value, "to_native") else value


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

    async def index_session(self, namespace: str, session_id: str) -> SessionIndexReport:
        turns = await self.turns(namespace, session_id)
        chunks = chunks_for(self.settings.memory.indexing, session_id, turns.values(), namespace)
        provenance = self.provenance()
        results: list[ExtractionResult] = []
        with metering() as meter:
            try:
                unmetered = Usage()
                for chunk in chunks:
                    before = len(meter.calls)
                    result, cost = await self.extractor.extract(chunk)
                    results.append(result)
                    if cost.calls > len(meter.calls) - before:  # an extractor outside the LLM transport
                        unmetered = unmetered + cost
            except ExtractionFailed as failed:
                report = _report(namespace, session_id, provenance, len(chunks))
                return await self._failed(report, meter.summary()["calls"], failed, provenance)
        return await self.write_extracted(namespace, session_id, merge(results), unmetered, len(chunks), turns,
                                          calls=meter.summary()["calls"])

    async def turns(self, namespace: str, session_id: str) -> dict[str, ChunkTurn]:
        rows = await self.store.read("queries/session_turns", namespace=namespace, session_id=session_id)
        if not rows:
            raise KeyError(f"session {session_id!r} of namespace {namespace!r} has no turns")
        return {
            t["id"]: ChunkTurn(id=t["id"], idx=t["idx"], role=t["role"], speaker=t["speaker"], text=t["text"],
                               ts=_native(t["ts"]))
            for t in (r["turn"] for r in rows)
        }

    async def write_extracted(
        self, namespace: str, session_id: str, result: ExtractionResult, usage: Usage = Usage(), chunks: int = 0,
        turns: dict[str, ChunkTurn] | None = None, calls: list[dict[str, Any]] | None = None,
    ) -> SessionIndexReport:
        """Write an extraction made elsewhere (e.g. a job's resumable per-chunk passes) as `index_session`
        would: one transaction, stamped with this indexer's extractor. `calls`: the LLM calls the
        extraction made (records of `kg.llm_usage`); `usage` counts extraction calls not recorded
        (an extractor outside the transport). The write's own calls (judges, adjudication) are
        metered here; the sum is reported and added to the session."""
        turns = turns if turns is not None else await self.turns(namespace, session_id)
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
            "queries/sessions_pending_index", namespace=namespace, idle_before=idle_before,
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
            "queries/session_extraction_failed", namespace=report.namespace, session_id=report.session_id,
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
            await self.store.write("queries/session_add_llm_usage", namespace=report.namespace,
                                   session_id=report.session_id, llm_calls=report.llm_calls,
                                   input_tokens=report.input_tokens, output_tokens=report.output_tokens)


def _report(namespace: str, session_id: str, provenance: Provenance, chunks: int) -> SessionIndexReport:
    return SessionIndexReport(namespace=namespace, session_id=session_id, status="indexed",
                              extractor=provenance.extractor, model=provenance.model,
                              prompt_version=provenance.prompt_version, chunks=chunks)


def _counts(report: SessionIndexReport, written: Written) -> SessionIndexReport:
    return report.model_copy(update=vars(written))


@asynccontextmanager
async def open_indexer(memory: AsyncMemory, extractor: Extractor | None = None) -> AsyncIterator[SessionIndexer]:
    """An indexer wired to `memory` (its store, embedder, fact and correction hooks) with the
    `[memory.indexing] backend` extractor, closed afterwards."""
    from ingest.dedup.adjudication import adjudicator_for
    from ingest.extraction.session import session_extractor_for  # loads the LLM SDKs: only when indexing runs

    settings = memory.settings
    own = extractor is None
    extractor = extractor or session_extractor_for(settings, memory.store)
    adjudicate = memory.entity_adjudicator or adjudicator_for(settings)
    try:
        resolver = GraphResolver(settings.memory.entity_deduplication, memory.embedder, adjudicate,
                                 embedding_model=memory.embedder.name)
        writer = SessionGraphWriter(
            memory.store, resolver, FactWriter(memory.store, settings, memory.predicate_resolver),
            CorrectionWriter(memory.store, memory.embedder, settings.memory.corrections, memory.correction_judge),
            RelationshipWriter(memory.store, settings))
        yield SessionIndexer(memory.store, settings, extractor, writer, adjudicate)
    finally:
        for closable in (extractor if own else None, adjudicate):
            close = getattr(closable, "aclose", None)
            if close is not None:
                await close()
