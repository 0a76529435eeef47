"""What a job of each kind does: the registry of kind -> async handler(engine, run) -> pass outputs.

A handler gets the open `Engine` and the `JobRun` (job, saved passes); it returns a dict
that is merged into the job's `pass_outputs`. Multi-pass work wraps each pass in `run.step(name,
...)`, so a crashed attempt resumes after the last pass it saved. Handlers must tolerate being
re-run (a job can be retried, or re-queued when new work arrives for its target). Raise
`PermanentJobError` when retrying cannot help.

Registered here: `embed_backfill`, `maintain_corrections`, `extract_session` (extraction alone,
resumable per chunk), `summarize_due`, `summarize_session`, `index_session`, `expire_store_items`. A new kind: write the
handler, `register(JobKind(...))` it, and if a schedule should enqueue it, add a sweep in
`kg.jobs.sweeps`.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, AsyncIterator, Awaitable, Callable

from kg.core.embedders.base import embed_async
from kg.core.prompts.extraction import ChunkTurn
from kg.core.store.store import Store
from kg.engine import Engine
from kg.ingest.corrections.maintain import maintain
from kg.ingest.extraction.extractor import Extractor
from kg.ingest.indexing import PlanGone, extract, session_turns
from kg.ingest.reembed import encode_late
from kg.ingest.turn_keys import embed_keys, row_key
from kg.jobs.queue import JobRun, JobSuperseded, PermanentJobError

Handler = Callable[[Engine, JobRun], Awaitable[dict[str, Any]]]


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
    stale_params: Callable[[Engine], Awaitable[dict[str, Any]]] | None = None


KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    """Add (or replace) a job kind; workers started afterwards run it."""
    KINDS[kind.name] = kind
    return kind


# -- embed_backfill (target: "turns") ---------------------------------------------------------
async def embed_backfill(engine: Engine, run: JobRun) -> dict[str, Any]:
    """Embed the namespace's turns stored without an embedding: those the fallback embedder embedded
    too (kg.core.embedders.fallback), whose vector is replaced; then, with late interaction on, the
    token vectors of turns written without them (before it was installed, or by an older version).
    Each page commits on its own, so an interrupted run leaves only fewer turns to do; while the
    primary is down it fails and is retried."""
    done = 0
    while True:
        rows = await engine.store.read(
            "jobs/turns_unembedded", namespace=run.namespace, limit=engine.settings.ingest.batch_size
        )
        if not rows:
            late = engine.late_encoder  # token vectors (late interaction) for turns written without them
            tokens = await encode_late(engine.store, late, engine.settings, run.namespace, missing=True) \
                if late is not None else 0
            return {"embedded": done, "late_tokens": tokens}
        keys = [row_key(r) for r in rows]
        keyed = await embed_keys(engine.embedder, keys, engine.settings.ingest,
                                 lambda texts: embed_async(engine.embedder, texts))
        await engine.store.write(
            "turns/set_embedding", model=engine.embedder.name,
            rows=[{"id": r["id"], "embedding": kv.vector, "passages": kv.passages, "text": key}
                  for r, key, kv in zip(rows, keys, keyed)],
        )
        done += len(rows)


# -- maintain_corrections (target: the night, YYYY-MM-DD) -------------------------------------
async def maintain_corrections(engine: Engine, run: JobRun) -> dict[str, Any]:
    """The nightly correction clustering, merging, promotion and decay of one namespace."""
    report = await maintain(engine.store, engine.settings.memory.corrections, run.namespace, None,
                            engine.correction_labeler)
    return {"report": {
        "corrections": report.corrections, "clusters": len(report.clusters), "merged": len(report.merged),
        "invalidated": len(report.invalidated), "promoted": len(report.promoted),
        "demoted": len(report.demoted), "counts": report.counts,
        "markdown_path": str(report.markdown_path) if report.markdown_path else None,
    }}


# -- extract_session (target: a session id) ---------------------------------------------------
@asynccontextmanager
async def _extractor(engine: Engine) -> AsyncIterator[Extractor]:
    from kg.ingest.extraction.session import session_extractor_for  # loads the LLM SDKs: only when extraction runs

    extractor = session_extractor_for(engine.settings, engine.store)
    try:
        yield extractor
    finally:
        close = getattr(extractor, "aclose", None)
        if close is not None:
            await close()


async def extract_session(engine: Engine, run: JobRun) -> dict[str, Any]:
    """Extraction alone (a dry run of indexing): the merged result stays in `pass_outputs["merged"]`."""
    async with _extractor(engine) as extractor:
        turns = await _turns(engine, run)
        result, _, _, _ = await extract(engine.settings, extractor, run.namespace, run.target, turns, run)
    return {"merged": result.model_dump(mode="json")}


async def _turns(engine: Engine, run: JobRun) -> dict[str, ChunkTurn]:
    try:
        return await session_turns(engine.store, run.namespace, run.target)
    except PlanGone as gone:
        if await engine.session(run.namespace, run.target) is None:
            raise JobSuperseded(_gone(run)) from None
        raise PermanentJobError(str(gone)) from None


def _gone(run: JobRun) -> str:
    return (f"session {run.target!r} of namespace {run.namespace!r} no longer exists: a later message renamed "
            "it or merged it into another automatic session (or it was erased)")


# -- summaries (issue 5): summarize_due (target: "sessions"), summarize_session (a session id) ----
async def summarize_due(engine: Engine, run: JobRun) -> dict[str, Any]:
    """The namespace's due sessions (idle, closed, or grown by `summarize_every_messages`): each is
    marked as summarized when done, so a crashed run resumes with the sessions still due."""
    async with engine.open_summarizer() as summarizer:
        summaries = await summarizer.due(run.namespace)
    return {"summarized": [{"session_id": s.session_id, "version": s.version} for s in summaries]}


async def summarize_session(engine: Engine, run: JobRun) -> dict[str, Any]:
    """Summarize one session again from its first turn (a new version replaces the current one)."""
    session = await engine.session(run.namespace, run.target)
    if session is None:
        raise JobSuperseded(_gone(run))
    async with engine.open_summarizer() as writer:
        summary = await writer.summarize(run.namespace, run.target, datetime.now(timezone.utc),
                                         open_=session.status != "closed")
    if summary is None:
        return {"version": None}
    return {"version": summary.version, "prompt_version": summary.prompt_version, "model": summary.model}


async def summary_versions(engine: Engine) -> dict[str, Any]:
    async with engine.open_summarizer() as writer:
        s = writer.summarizer
        return {"model": s.model, "prompt_versions": [s.prompt_version, s.rollup_prompt_version],
                "embedding_model": engine.embedder.name}


# -- index_session (issue 3; target: a session id) ----------------------------------------------
async def index_session(engine: Engine, run: JobRun) -> dict[str, Any]:
    """Post-session indexing: the resumable extraction passes, then `write_extracted` writes the
    result in one transaction, stamped with the extractor. A failed extraction writes nothing,
    marks the session `extraction_failed` and fails the attempt (backoff, then dead letter); the
    chunks answered so far are kept for the next attempt."""
    async with _extractor(engine) as extractor, engine.open_indexer(extractor) as indexer:
        turns = await _turns(engine, run)
        try:
            report = await indexer.index_session(run.namespace, run.target, steps=run, raise_failure=True, turns=turns)
        except PlanGone as gone:
            raise PermanentJobError(str(gone)) from None
    return {"report": report.model_dump(mode="json")}


async def extraction_version(engine: Engine) -> dict[str, Any]:
    """The `extraction_version` index_session stamps on sessions with the configured extractor."""
    from kg.ingest.extraction.session import session_extractor_for
    from kg.ingest.session_graph import Provenance

    extractor = session_extractor_for(engine.settings, engine.store)
    try:
        return {"version": Provenance(extractor.backend, extractor.model, extractor.prompt_version).version}
    finally:
        if hasattr(extractor, "aclose"):
            await extractor.aclose()


# -- expire_store_items (target: "store_items") ------------------------------------------------
EXPIRE_PAGE = 1000


async def expire_store_items(store: Store, namespace: str | None) -> int:
    """Delete the LangGraph store items past their expiry (of one kg namespace, or all), a page per
    transaction; the number deleted. The job below runs it, and so does `KgStore`'s own sweeper."""
    deleted = 0
    while True:
        [row] = await store.write("store_items/expire", namespace=namespace, limit=EXPIRE_PAGE)
        deleted += row["deleted"]
        if row["deleted"] < EXPIRE_PAGE:
            return deleted


async def expire_store_items_job(engine: Engine, run: JobRun) -> dict[str, Any]:
    """A namespace's LangGraph store items whose TTL ran out (docs/langgraph.md, TTL)."""
    return {"deleted": await expire_store_items(engine.store, run.namespace)}


register(JobKind("embed_backfill", embed_backfill, "embed a namespace's turns that have no embedding"))
register(JobKind("maintain_corrections", maintain_corrections,
                 "nightly correction clustering, merging, promotion and decay of a namespace"))
register(JobKind("extract_session", extract_session,
                 "post-session extraction of one session, kept on the job (no graph writes)"))
register(JobKind("summarize_due", summarize_due, "summarize a namespace's due sessions (idle, closed or grown)"))
register(JobKind("summarize_session", summarize_session, "summarize one session again (reindex)",
                 stale_query="jobs/summaries_stale", stale_params=summary_versions))
register(JobKind("expire_store_items", expire_store_items_job,
                 "delete a namespace's LangGraph store items past their TTL"))
register(JobKind("index_session", index_session, "post-session indexing of one session, resumable per chunk",
                 stale_query="jobs/extractions_stale", stale_params=extraction_version))
