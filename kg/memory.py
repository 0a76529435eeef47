"""`Memory`: `AsyncMemory` (kg.async_memory), synchronous. A private event loop runs in a background
thread; every method has the signature of its async twin (`tests/test_memory_sync.py` holds them equal).

    with Memory() as memory:
        memory.add_message("acme", "user", "I moved to Lisbon", ts=datetime.now(UTC))
        hits = memory.search_turns("acme", "where does the user live?", k=5)
"""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime
from typing import Any, Awaitable, Callable, Iterable, Iterator, Literal, Mapping, Sequence, TypeVar

from kg.async_memory import AsyncMemory
from kg.queries.recipes import Recipe
from kg.core.config import Settings
from kg.core.export_format import ImportReport
from kg.core.correction_models import (
    ClusterView, CoreRules, CorrectionResult, CorrectionStatus, CorrectionView, MaintenanceReport,
)
from kg.core.facts_models import FactView, RememberResult
from kg.core.indexing_models import IndexReport, SessionIndexReport
from kg.core.job_models import Job, RunReport
from kg.core.models import Attachment, Erasure, IngestReport, Message, Session, Turn
from kg.core.recall_models import MemoryHit, RankedTurn, SessionHit, Summary
from kg.core.relationship_models import RelateResult, RelationshipView

__all__ = ["AsyncMemory", "Memory"]

R = TypeVar("R")


class Memory:
    """`AsyncMemory`'s methods, synchronous: `with Memory() as memory: ...`."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._async = AsyncMemory(settings)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kg-memory-loop", daemon=True)
        self._thread.start()

    @property
    def settings(self) -> Settings:
        return self._async.settings

    def _run(self, coro: Awaitable[R]) -> R:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # type: ignore[arg-type]

    def __enter__(self) -> "Memory":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Connect (starting the managed local Neo4j when no URI is configured), load the embedder,
        apply pending migrations."""
        self._run(self._async.open())

    def start(self) -> None:
        """`open` for a service: a database that cannot be reached yet (down, or still starting) is
        not an error. Until it answers, each call raises `DatabaseUnreachable` at once and one
        attempt to connect runs in the background."""
        self._run(self._async.start())

    def close(self) -> None:
        if self._loop.is_running():
            self._run(self._async.close())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()

    def add_message(
        self,
        namespace: str,
        role: str,
        text: str,
        ts: datetime,
        speaker: str | None = None,
        session_id: str | None = None,
        attachments: Sequence[Attachment | Mapping[str, Any]] = (),
    ) -> Turn:
        """See `AsyncMemory.add_message`."""
        return self._run(self._async.add_message(namespace, role, text, ts, speaker, session_id, attachments))

    def add_turns(
        self,
        namespace: str,
        session_id: str,
        turns: Iterable[Mapping[str, Any] | Message],
    ) -> IngestReport:
        """Bulk-append turns (dicts with role, text, ts, speaker?) to one session."""
        return self._run(self._async.add_turns(namespace, session_id, turns))

    def ingest(
        self,
        messages: Iterable[Message],
        on_batch: Callable[[IngestReport], None] | None = None,
    ) -> IngestReport:
        """Write a stream of messages in batches (idempotent: stored turns are skipped)."""
        return self._run(self._async.ingest(messages, on_batch))

    def remember(
        self,
        namespace: str,
        subject: str,
        predicate: str,
        object: str,
        valid_from: datetime | None = None,
        recorded_at: datetime | None = None,
        source: Literal['stated', 'observed', 'inferred', 'system'] = 'stated',
        op: Literal['assert', 'retract'] = 'assert',
        evidence_turn_ids: Iterable[str] = (),
        extractor: str | None = None,
        prompt_version: str | None = None,
        subject_type: str = 'other',
        object_type: str | None = None,
    ) -> RememberResult:
        """See `AsyncMemory.remember`."""
        return self._run(self._async.remember(namespace, subject, predicate, object, valid_from, recorded_at, source, op, evidence_turn_ids, extractor, prompt_version, subject_type, object_type))

    def facts(
        self,
        namespace: str,
        subject: str,
        predicate: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        include_superseded: bool = False,
    ) -> list[FactView]:
        """See `AsyncMemory.facts`."""
        return self._run(self._async.facts(namespace, subject, predicate, as_of, known_at, include_superseded))

    def history(
        self,
        namespace: str,
        subject: str,
        predicate: str | None = None,
        known_at: datetime | None = None,
        include_expired: bool = False,
    ) -> list[FactView]:
        """Every interval of the subject's facts, in valid-time order, with what superseded each."""
        return self._run(self._async.history(namespace, subject, predicate, known_at, include_expired))

    def close_session(self, namespace: str, session_id: str, now: datetime | None = None) -> Summary | None:
        """See `AsyncMemory.close_session`."""
        return self._run(self._async.close_session(namespace, session_id, now))

    def summarize_due(self, namespace: str | None = None, now: datetime | None = None) -> list[Summary]:
        """See `AsyncMemory.summarize_due`."""
        return self._run(self._async.summarize_due(namespace, now))

    def summaries(self, namespace: str, session_id: str, include_expired: bool = False) -> list[Summary]:
        """See `AsyncMemory.summaries`."""
        return self._run(self._async.summaries(namespace, session_id, include_expired))

    def search_turns(
        self,
        namespace: str,
        query: str,
        k: int = 10,
        recipe: str | Recipe | None = None,
        as_of: datetime | None = None,
    ) -> list[RankedTurn]:
        """See `AsyncMemory.search_turns`."""
        return self._run(self._async.search_turns(namespace, query, k, recipe, as_of))

    def retrieve(
        self,
        namespace: str,
        query: str,
        k: int = 10,
        recipe: str | Recipe | None = None,
        as_of: datetime | None = None,
    ) -> list[RankedTurn]:
        """The same as `search_turns` (its name in the retrieval papers)."""
        return self._run(self._async.retrieve(namespace, query, k, recipe, as_of))

    def search_sessions(
        self,
        namespace: str,
        query: str,
        k: int = 5,
        recipe: str | Recipe | None = None,
        as_of: datetime | None = None,
    ) -> list[SessionHit]:
        """Session arcs for "what did we discuss about X?": sessions with their summary and best turns."""
        return self._run(self._async.search_sessions(namespace, query, k, recipe, as_of))

    def search_memories(
        self,
        namespace: str,
        query: str,
        k: int = 10,
        as_of: datetime | None = None,
    ) -> list[MemoryHit]:
        """Facts and turns for "what did we decide about X?", one score each (see `recall`)."""
        return self._run(self._async.search_memories(namespace, query, k, as_of))

    def recall(self, namespace: str, query: str, k: int = 10, as_of: datetime | None = None) -> list[MemoryHit]:
        """See `AsyncMemory.recall`."""
        return self._run(self._async.recall(namespace, query, k, as_of))

    def delete_namespace(self, namespace: str) -> None:
        """See `AsyncMemory.delete_namespace`."""
        return self._run(self._async.delete_namespace(namespace))

    def add_correction(
        self,
        namespace: str,
        session_id: str,
        rule_text: str,
        original_behavior: str | None = None,
        corrected_behavior: str | None = None,
        correction_type: str = 'preference',
        seen_at: datetime | None = None,
        evidence_turn_ids: Iterable[str] = (),
        confidence: float | None = None,
    ) -> CorrectionResult:
        """See `AsyncMemory.add_correction`."""
        return self._run(self._async.add_correction(namespace, session_id, rule_text, original_behavior, corrected_behavior, correction_type, seen_at, evidence_turn_ids, confidence))

    def confirm_rule(self, namespace: str, correction_id: str, at: datetime | None = None) -> CorrectionView:
        """The user explicitly confirmed a correction: it becomes a rule (and decays slowly)."""
        return self._run(self._async.confirm_rule(namespace, correction_id, at))

    def core_rules(self, namespace: str, at: datetime | None = None) -> CoreRules:
        """Rules and strong preferences standing at `at` (None: now); `.render()` gives a prompt block."""
        return self._run(self._async.core_rules(namespace, at))

    def corrections(
        self,
        namespace: str,
        status: CorrectionStatus | None = None,
        include_invalidated: bool = False,
    ) -> list[CorrectionView]:
        """Browse a namespace's corrections, most reinforced first, weights as of now."""
        return self._run(self._async.corrections(namespace, status, include_invalidated))

    def correction_clusters(self, namespace: str, limit: int = 10) -> list[ClusterView]:
        """The most reinforced clusters found by the last `maintain_corrections`."""
        return self._run(self._async.correction_clusters(namespace, limit))

    def maintain_corrections(self, namespace: str, now: datetime | None = None) -> MaintenanceReport:
        """See `AsyncMemory.maintain_corrections`."""
        return self._run(self._async.maintain_corrections(namespace, now))

    def relate(
        self,
        namespace: str,
        subject: str,
        type: str,
        object: str,
        valid_from: datetime | None = None,
        recorded_at: datetime | None = None,
        op: Literal['assert', 'retract'] = 'assert',
        source: Literal['stated', 'observed', 'inferred', 'system'] = 'stated',
        evidence_turn_ids: Iterable[str] = (),
        subject_type: str = 'other',
        object_type: str = 'other',
    ) -> RelateResult:
        """See `AsyncMemory.relate`."""
        return self._run(self._async.relate(namespace, subject, type, object, valid_from, recorded_at, op, source, evidence_turn_ids, subject_type, object_type))

    def relationships(
        self,
        namespace: str,
        subject: str,
        type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        include_ended: bool = False,
    ) -> list[RelationshipView]:
        """See `AsyncMemory.relationships`."""
        return self._run(self._async.relationships(namespace, subject, type, as_of, known_at, include_ended))

    def index_session(self, namespace: str, session_id: str) -> SessionIndexReport:
        """See `AsyncMemory.index_session`."""
        return self._run(self._async.index_session(namespace, session_id))

    def index_pending(self, namespace: str | None = None, limit: int | None = None) -> IndexReport:
        """See `AsyncMemory.index_pending`."""
        return self._run(self._async.index_pending(namespace, limit))

    def enqueue_job(
        self,
        kind: str,
        namespace: str,
        target: str,
        params: Mapping[str, Any] | None = None,
        rerun: bool = False,
    ) -> Job:
        """See `AsyncMemory.enqueue_job`."""
        return self._run(self._async.enqueue_job(kind, namespace, target, params, rerun))

    def jobs(
        self,
        status: str | None = None,
        kind: str | None = None,
        namespace: str | None = None,
        limit: int = 50,
    ) -> list[Job]:
        """Jobs, newest first; `status` is queued, running, done or dead (the dead letters)."""
        return self._run(self._async.jobs(status, kind, namespace, limit))

    def job(self, job_id: str) -> Job | None:
        """See `AsyncMemory.job`."""
        return self._run(self._async.job(job_id))

    def retry_job(self, job_id: str) -> Job | None:
        """See `AsyncMemory.retry_job`."""
        return self._run(self._async.retry_job(job_id))

    def run_jobs(self, sweep: bool = True, wait_s: float = 0.0, namespace: str | None = None) -> RunReport:
        """See `AsyncMemory.run_jobs`."""
        return self._run(self._async.run_jobs(sweep, wait_s, namespace))

    def erase_session(self, namespace: str, session_id: str, by: str = 'local') -> Erasure:
        """See `AsyncMemory.erase_session`."""
        return self._run(self._async.erase_session(namespace, session_id, by))

    def erase_subject(self, namespace: str, subject: str, by: str = 'local') -> Erasure:
        """See `AsyncMemory.erase_subject`."""
        return self._run(self._async.erase_subject(namespace, subject, by))

    def erase_namespace(self, namespace: str, by: str = 'local') -> Erasure:
        """See `AsyncMemory.erase_namespace`."""
        return self._run(self._async.erase_namespace(namespace, by))

    def erasures(self, namespace: str, limit: int = 100) -> list[Erasure]:
        """The namespace's erasure records, newest first."""
        return self._run(self._async.erasures(namespace, limit))

    def export_namespace(self, namespace: str, subject: str | None = None,
                         vectors: bool = False) -> Iterator[dict[str, Any]]:
        """See `AsyncMemory.export_namespace`; the records one by one, as the async twin streams them."""
        records = self._async.export_namespace(namespace, subject, vectors)
        while True:
            try:
                yield self._run(records.__anext__())
            except StopAsyncIteration:
                return

    def import_records(self, namespace: str, records: Iterable[dict[str, Any]]) -> ImportReport:
        """See `AsyncMemory.import_records`."""
        return self._run(self._async.import_records(namespace, records))

    def session(self, namespace: str, session_id: str) -> Session | None:
        """See `AsyncMemory.session`."""
        return self._run(self._async.session(namespace, session_id))

    def sessions(self, namespace: str, limit: int = 100) -> list[Session]:
        """See `AsyncMemory.sessions`."""
        return self._run(self._async.sessions(namespace, limit))

    def turns(self, namespace: str, session_id: str) -> list[Turn]:
        """See `AsyncMemory.turns`."""
        return self._run(self._async.turns(namespace, session_id))

