"""What a job of each kind does: the registry of kind -> async handler(memory, run) -> pass outputs.

A handler gets the open `AsyncMemory` and the `JobRun` (job, saved passes); it returns a dict
that is merged into the job's `pass_outputs`. Multi-pass work wraps each pass in `run.step(name,
...)`, so a crashed attempt resumes after the last pass it saved. Handlers must tolerate being
re-run (a job can be retried, or re-queued when new work arrives for its target). Raise
`PermanentJobError` when retrying cannot help.

Registered here: `embed_backfill`, `maintain_corrections`, `extract_session` (extraction alone,
resumable per chunk), `summarize_due`, `summarize_session`, `index_session`. A new kind: write the
handler, `register(JobKind(...))` it, and if a schedule should enqueue it, add a sweep in
`ingest.sweeps`.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable

from ingest.extraction.chunking import chunks_for, merge
from ingest.extraction.extractor import ExtractionFailed, Extractor, Usage
from ingest.extraction.models import ChunkInput, ChunkTurn, ExtractionResult
from ingest.jobs import JobRun, PermanentJobError
from ingest.turn_keys import row_key
from kg.llm_usage import metering

if TYPE_CHECKING:
    from kg.memory import AsyncMemory

Handler = Callable[["AsyncMemory", JobRun], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class JobKind:
    name: str
    handler: Handler
    about: str
    # Session-scoped kinds whose output records what made it (extractor, prompt, model, embedder):
    # `stale_query` names the Cypher file listing sessions whose output another version made (with
    # the filters $namespace, $session_id, $since), `stale_params` gives the current versions.
    # `kg reindex` re-runs such kinds; their target is a session id.
    stale_query: str | None = None
    stale_params: Callable[["AsyncMemory"], Awaitable[dict[str, Any]]] | None = None


KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    """Add (or replace) a job kind; workers started afterwards run it."""
    KINDS[kind.name] = kind
    return kind


# -- embed_backfill (target: "turns") ---------------------------------------------------------
async def embed_backfill(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
    """Embed the namespace's turns stored without an embedding. Each page commits on its own, so
    an interrupted run leaves only fewer turns to do."""
    limit = memory.settings.ingest.max_embed_chars
    done = 0
    while True:
        rows = await memory.store.read(
            "queries/job_turns_unembedded", namespace=run.namespace, limit=memory.settings.ingest.batch_size
        )
        if not rows:
            return {"embedded": done}
        keys = [row_key(r) for r in rows]
        vectors = await asyncio.to_thread(memory.embedder.embed, [key[:limit] for key in keys])
        await memory.store.write(
            "queries/turns_set_embedding", model=memory.embedder.name,
            rows=[{"id": r["id"], "embedding": v, "text": key} for r, key, v in zip(rows, keys, vectors)],
        )
        done += len(rows)


# -- maintain_corrections (target: the night, YYYY-MM-DD) -------------------------------------
async def maintain_corrections(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
    """The nightly correction clustering, merging, promotion and decay of one namespace."""
    report = await memory.maintain_corrections(run.namespace)
    return {"report": {
        "corrections": report.corrections, "clusters": len(report.clusters), "merged": len(report.merged),
        "invalidated": len(report.invalidated), "promoted": len(report.promoted),
        "demoted": len(report.demoted), "counts": report.counts,
        "markdown_path": str(report.markdown_path) if report.markdown_path else None,
    }}


# -- extract_session (target: a session id) ---------------------------------------------------
async def extraction_passes(
    memory: AsyncMemory, run: JobRun, session_id: str, extractor: Extractor
) -> tuple[ExtractionResult, Usage, int, list[dict[str, Any]]]:
    """Post-session extraction as resumable passes: `plan` fixes which turns each chunk holds,
    `chunk-NNNN` keeps each chunk's answer, so a retry after a crash or an LLM failure asks only
    for the chunks not answered yet. Returns the merged result, the cost of answers the meter did
    not record (an extractor outside the LLM transport), the chunk count and the metered calls;
    nothing is written to the graph. Saved passes of another extractor (the
    configuration changed between attempts) are dropped."""
    turns = {t.id: t for t in await memory.turns(run.namespace, session_id)}
    if not turns:
        raise PermanentJobError(f"session {session_id!r} of namespace {run.namespace!r} has no turns")
    made_by = {"backend": extractor.backend, "model": extractor.model, "prompt_version": extractor.prompt_version}
    if run.passes.get("plan") and {k: run.passes["plan"].get(k) for k in made_by} != made_by:
        run.passes.clear()

    async def plan() -> dict[str, Any]:
        ordered = sorted((_turn(turns, id) for id in turns), key=lambda t: t.idx)
        chunks = chunks_for(memory.settings.memory.indexing, session_id, ordered, run.namespace)
        return {**made_by, "chunks": [[t.id for t in c.turns] for c in chunks]}

    planned = await run.step("plan", plan)
    results, unmetered, count = [], Usage(), len(planned["chunks"])
    calls: list[dict[str, Any]] = []
    for i, ids in enumerate(planned["chunks"]):
        chunk = _planned_chunk(memory, run.namespace, session_id, [_turn(turns, id) for id in ids], i, count)

        async def ask(chunk: ChunkInput = chunk) -> dict[str, Any]:
            with metering() as meter:
                result, cost = await extractor.extract(chunk)
            return {"result": result.model_dump(mode="json"), "usage": cost.__dict__, "calls": meter.summary()["calls"]}

        saved = await run.step(f"chunk-{i:04d}", ask)
        results.append(ExtractionResult.model_validate(saved["result"]))
        calls += saved.get("calls", [])
        cost = Usage(**saved["usage"])
        unmetered = unmetered + Usage(max(0, cost.calls - len(saved.get("calls", []))), 0, 0)
    return merge(results), unmetered, count, calls


@asynccontextmanager
async def _extractor(memory: AsyncMemory) -> AsyncIterator[Extractor]:
    from ingest.extraction.session import session_extractor_for  # loads the LLM SDKs: only when extraction runs

    extractor = session_extractor_for(memory.settings, memory.store)
    try:
        yield extractor
    finally:
        close = getattr(extractor, "aclose", None)
        if close is not None:
            await close()


def _turn(turns: dict[str, Any], id: str) -> ChunkTurn:
    t = turns.get(id)
    if t is None:  # a turn of the saved plan is gone: the session was deleted or rewritten
        raise PermanentJobError(f"turn {id} of the saved extraction plan no longer exists")
    return ChunkTurn(id=t.id, idx=t.idx, role=t.role, speaker=t.speaker, text=t.text, ts=t.ts)


def _planned_chunk(
    memory: AsyncMemory, namespace: str, session_id: str, turns: list[ChunkTurn], index: int, count: int
) -> ChunkInput:
    """The chunk a saved plan names, its turns fitted to the token budget as in the first attempt."""
    fitted = chunks_for(memory.settings.memory.indexing, session_id, turns, namespace)
    seen: dict[str, ChunkTurn] = {t.id: t for c in fitted for t in c.turns}
    return ChunkInput(session_id=session_id, namespace=namespace, turns=sorted(seen.values(), key=lambda t: t.idx),
                      chunk_index=index, chunk_count=count)


async def extract_session(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
    """Extraction alone (a dry run of indexing): the merged result stays in `pass_outputs["merged"]`."""
    async with _extractor(memory) as extractor:
        result, _, _, _ = await extraction_passes(memory, run, run.target, extractor)
    return {"merged": result.model_dump(mode="json")}


# -- summaries (issue 5): summarize_due (target: "sessions"), summarize_session (a session id) ----
async def summarize_due(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
    """The namespace's due sessions (idle, closed, or grown by `summarize_every_messages`): each is
    marked as summarized when done, so a crashed run resumes with the sessions still due."""
    summaries = await memory.summarize_due(run.namespace)
    return {"summarized": [{"session_id": s.session_id, "version": s.version} for s in summaries]}


@asynccontextmanager
async def _session_summarizer(memory: AsyncMemory) -> AsyncIterator[Any]:
    from ingest.summaries.llm import summarizer_for
    from ingest.summaries.writer import SessionSummarizer

    summarizer = memory.summarizer or summarizer_for(memory.settings, memory.embedder, memory.store)
    try:
        yield SessionSummarizer(memory.store, memory.embedder, memory.settings, summarizer)
    finally:
        close = getattr(summarizer, "aclose", None)
        if summarizer is not memory.summarizer and close is not None:
            await close()


async def summarize_session(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
    """Summarize one session again from its first turn (a new version replaces the current one)."""
    session = await memory.session(run.namespace, run.target)
    if session is None:
        raise PermanentJobError(f"no session {run.target!r} in namespace {run.namespace!r}")
    async with _session_summarizer(memory) as writer:
        summary = await writer.summarize(run.namespace, run.target, datetime.now(timezone.utc),
                                         open_=session.status != "closed")
    if summary is None:
        return {"version": None}
    return {"version": summary.version, "prompt_version": summary.prompt_version, "model": summary.model}


async def summary_versions(memory: AsyncMemory) -> dict[str, Any]:
    async with _session_summarizer(memory) as writer:
        s = writer.summarizer
        return {"model": s.model, "prompt_versions": [s.prompt_version, s.rollup_prompt_version],
                "embedding_model": memory.embedder.name}


# -- index_session (issue 3; target: a session id) ----------------------------------------------
async def index_session(memory: AsyncMemory, run: JobRun) -> dict[str, Any]:
    """Post-session indexing: the resumable extraction passes, then `write_extracted` writes the
    result in one transaction, stamped with the extractor. A failed extraction writes nothing,
    marks the session `extraction_failed` and fails the attempt (backoff, then dead letter); the
    chunks answered so far are kept for the next attempt."""
    from ingest.indexing import open_indexer

    async with _extractor(memory) as extractor, open_indexer(memory, extractor) as indexer:
        try:
            result, usage, chunks, calls = await extraction_passes(memory, run, run.target, extractor)
        except ExtractionFailed as failed:
            await memory.store.write(
                "queries/session_extraction_failed", namespace=run.namespace, session_id=run.target,
                error=str(failed), requests=failed.attempts, now=datetime.now(timezone.utc),
                version=indexer.provenance().version)
            raise
        report = await indexer.write_extracted(run.namespace, run.target, result, usage, chunks, calls=calls)
    return {"report": report.model_dump(mode="json")}


async def extraction_version(memory: AsyncMemory) -> dict[str, Any]:
    """The `extraction_version` index_session stamps on sessions with the configured extractor."""
    from ingest.extraction.session import session_extractor_for
    from ingest.session_graph import Provenance

    extractor = session_extractor_for(memory.settings, memory.store)
    try:
        return {"version": Provenance(extractor.backend, extractor.model, extractor.prompt_version).version}
    finally:
        if hasattr(extractor, "aclose"):
            await extractor.aclose()


register(JobKind("embed_backfill", embed_backfill, "embed a namespace's turns that have no embedding"))
register(JobKind("maintain_corrections", maintain_corrections,
                 "nightly correction clustering, merging, promotion and decay of a namespace"))
register(JobKind("extract_session", extract_session,
                 "post-session extraction of one session, kept on the job (no graph writes)"))
register(JobKind("summarize_due", summarize_due, "summarize a namespace's due sessions (idle, closed or grown)"))
register(JobKind("summarize_session", summarize_session, "summarize one session again (reindex)",
                 stale_query="queries/job_summaries_stale", stale_params=summary_versions))
register(JobKind("index_session", index_session, "post-session indexing of one session, resumable per chunk",
                 stale_query="queries/job_extractions_stale", stale_params=extraction_version))
