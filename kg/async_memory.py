"""`AsyncMemory`, the public facade (`Memory` in `kg.memory` is the same, synchronous): one class of
thin methods over the services its engine (`kg.engine`) holds. The write path (`kg.ingest`) and the
read path (`kg.queries`) do the work; what only the facade puts together lives in a module of one
job each: forgetting in `kg._erasure`, export and import in `kg._export`, a user's existing history
in `kg._history_import`, the review of what changed in `kg._review`. One file, because it is one
concept: its size follows the concept, not a line count.

    async with AsyncMemory() as memory:
        await memory.add_message("acme", "user", "I moved to Lisbon", ts=datetime.now(UTC))
        hits = await memory.search_turns("acme", "where does the user live?", k=5)
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, AsyncIterator, Callable, Iterable, Mapping, Sequence

from kg import _erasure, _export, _history_import, _review
from kg.access import LOCAL
from kg.core.models.corrections import (
    ClusterView,
    CoreRules,
    CorrectionResult,
    CorrectionStatus,
    CorrectionType,
    CorrectionView,
    MaintenanceReport,
)
from kg.core.models.export import ImportReport
from kg.core.models.facts import FactView, RememberResult
from kg.core.models.indexing import IndexReport, SessionIndexReport
from kg.core.models.jobs import Job, RunReport
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit, Summary, summary_from_props
from kg.core.models.relationships import RelateResult, RelationshipView
from kg.core.models.requests import (
    CorrectionReport,
    FactAssertion,
    FactHistoryQuery,
    FactQuery,
    Op,
    RelationshipAssertion,
    RelationshipQuery,
    SearchRequest,
    Source,
)
from kg.core.models.trust import ChangeResult, Changes, Explanation
from kg.core.models.turns import Attachment, Erasure, IngestReport, Message, Session, Turn, check_namespace
from kg.core.models.values import native_props
from kg.core.settings.tree import Settings
from kg.core.vocabulary import Trust
from kg.engine import Engine
from kg.ingest.facts import FactWriter
from kg.ingest.history.messages import Format
from kg.ingest.relationships import RelationshipWriter
from kg.ingest.temporal import Origin
from kg.ingest.turns import TurnWriter, VectorSink
from kg.jobs.kinds import KINDS
from kg.jobs.queue import JobQueue
from kg.jobs.worker import run_once
from kg.queries import corrections as correction_queries
from kg.queries import facts as fact_queries
from kg.queries import relationships as relationship_queries
from kg.queries.recall import ranked_turns, recall, search_sessions
from kg.queries.recipes import Recipe
from kg.queries.recipes import recipe as pick
from kg.queries.retrieve import Retriever
from kg.rerankers import reranker_source


class AsyncMemory(Engine):
    """The memory of a set of namespaces on one Neo4j: write turns, facts and corrections; ask by
    recipe, by time and by subject. `async with AsyncMemory() as memory: ...`; `Memory` is the same,
    synchronous."""

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)
        self._retriever_cache: Any = None

    async def __aenter__(self) -> "AsyncMemory":
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self, warm: bool = False) -> None:
        """Connect (starting the managed local Neo4j when no URI is configured), make the
        embedder, apply pending migrations; `warm` loads the embedder's weights meanwhile."""
        await super().open(warm)

    async def close(self) -> None:
        retriever, self._retriever_cache = self._retriever_cache, None
        if retriever is not None:
            await retriever.aclose()  # rerankers: worker threads, LLM clients
        await super().close()

    # -- write ------------------------------------------------------------------------------
    async def add_message(
        self,
        namespace: str,
        role: str,
        text: str,
        ts: datetime,
        speaker: str | None = None,
        session_id: str | None = None,
        attachments: Sequence[Attachment | Mapping[str, Any]] = (),
        trust: Trust = "trusted",
    ) -> Turn:
        """Store one message. Without `session_id` it joins the namespace's current session, or
        opens a new one after `[session] gap_minutes` of silence. `attachments`: what was shared
        with it ({kind, caption, url?}; the captions are searchable). `trust="untrusted"`: tool
        output, a web page, another agent's message (docs/trust.md). Returns the stored turn."""
        message = Message(namespace=namespace, role=role, text=text, ts=ts, speaker=speaker, session_id=session_id,
                          attachments=list(attachments), trust=trust)
        writer = self._turn_writer()
        await writer.write([message])
        turn_id = writer.stored_as.get(writer.ids.last_id or "", writer.ids.last_id)  # stored before: that turn
        rows = await self.store.read("turns/get", namespace=namespace, id=turn_id)
        return Turn.model_validate(native_props(rows[0]["turn"]))

    async def add_turns(
        self, namespace: str, session_id: str, turns: Iterable[Mapping[str, Any] | Message]
    ) -> IngestReport:
        """Bulk-append turns (dicts with role, text, ts, speaker?) to one session."""
        messages = (
            t if isinstance(t, Message) else Message(namespace=namespace, session_id=session_id, **dict(t))
            for t in turns
        )
        return await self.ingest(messages)

    async def ingest(
        self, messages: Iterable[Message], on_batch: Callable[[IngestReport], None] | None = None
    ) -> IngestReport:
        """Write a stream of messages in batches (idempotent: stored turns are skipped)."""
        return await self._turn_writer().write(messages, on_batch)

    def _turn_writer(self) -> TurnWriter:
        return TurnWriter(self.store, self.embedder, self.settings, self.fallback_embedder, self.vector_sink(),
                          self.late_encoder)

    def vector_sink(self) -> VectorSink | None:
        """The retriever's in-memory vectors, told what this process writes (`kg.ingest.turns.VectorSink`)."""
        return self._retriever().vectors

    # -- facts over time ----------------------------------------------------------------------
    async def remember(
        self,
        namespace: str,
        subject: str,
        predicate: str,
        object: str,
        valid_from: datetime | None = None,
        recorded_at: datetime | None = None,
        source: Source = "stated",
        op: Op = "assert",
        evidence_turn_ids: Iterable[str] = (),
        extractor: str | None = None,
        prompt_version: str | None = None,
        subject_type: str = "other",
        object_type: str | None = None,
        trust: Trust = "trusted",
    ) -> RememberResult:
        """Learn (`assert`) or unlearn (`retract`) that `subject predicate object` from `valid_from`
        (default: now), recorded at transaction time `recorded_at` (default: now). A functional
        predicate's new value supersedes the old one; the same value reinforces it; nothing is
        deleted. `object_type` makes the object an entity. `trust="untrusted"`: it never ends or
        changes a trusted fact until confirmed (docs/trust.md). See docs/facts-over-time.md."""
        fact = FactAssertion.of(locals())
        check_namespace(namespace)
        writer = FactWriter(self.store, self.settings, self.predicate_resolver)
        return await writer.remember(namespace, fact, Origin(extractor=extractor, prompt_version=prompt_version))

    async def facts(
        self,
        namespace: str,
        subject: str,
        predicate: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        include_superseded: bool = False,
    ) -> list[FactView]:
        """What holds for `subject` at valid time `as_of` (None: now) as believed at `known_at`
        (None: now), with confidence scores; `include_superseded` adds the facts ended by then."""
        return await fact_queries.facts(self.store, self.settings.memory.confidence, namespace, FactQuery.of(locals()))

    async def history(
        self,
        namespace: str,
        subject: str,
        predicate: str | None = None,
        known_at: datetime | None = None,
        include_expired: bool = False,
    ) -> list[FactView]:
        """Every interval of the subject's facts, in valid-time order, with what superseded each."""
        query = FactHistoryQuery.of(locals())
        return await fact_queries.history(self.store, self.settings.memory.confidence, namespace, query)

    # -- relationships over time (ingest/relationships, queries/relationships) ---------------------
    async def relate(
        self,
        namespace: str,
        subject: str,
        type: str,
        object: str,
        valid_from: datetime | None = None,
        recorded_at: datetime | None = None,
        op: Op = "assert",
        source: Source = "stated",
        evidence_turn_ids: Iterable[str] = (),
        subject_type: str = "other",
        object_type: str = "other",
        trust: Trust = "trusted",
    ) -> RelateResult:
        """Learn (`assert`) or unlearn (`retract`) that `subject -[type]-> object` from `valid_from`
        (default: now), recorded at transaction time `recorded_at` (default: now). For a one-to-one
        type (`works_for`, `married_to`, ... and `[memory.relationships]`), a new object ends the
        subject's previous one of that type from `valid_from`; other types end only by a retraction.
        Only the subject's edges of this type are ever touched. `trust="untrusted"` (tool output,
        another agent): it never ends a trusted edge until confirmed (docs/trust.md)."""
        return await RelationshipWriter(self.store, self.settings).relate(namespace, RelationshipAssertion.of(locals()))

    async def relationships(
        self,
        namespace: str,
        subject: str,
        type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        include_ended: bool = False,
    ) -> list[RelationshipView]:
        """The subject's relationships (of `type`, or all) at valid time `as_of` (None: now) as
        believed at `known_at` (None: now); `include_ended` adds those ended by then."""
        return await relationship_queries.relationships(self.store, namespace, RelationshipQuery.of(locals()))

    # -- sessions and their turns --------------------------------------------------------------
    async def session(self, namespace: str, session_id: str) -> Session | None:
        """One session (None: there is no such session); the jobs read it through the engine too."""
        return await super().session(namespace, session_id)

    async def sessions(self, namespace: str, limit: int = 100) -> list[Session]:
        """The namespace's latest sessions."""
        rows = await self.store.read("sessions/list", namespace=namespace, limit=limit)
        return [Session.model_validate(native_props(r["session"])) for r in rows]

    async def turns(self, namespace: str, session_id: str) -> list[Turn]:
        """A session's turns, in order."""
        rows = await self.store.read("sessions/turns", namespace=namespace, session_id=session_id)
        return [Turn.model_validate(native_props(r["turn"])) for r in rows]

    # -- session summaries (ingest/summaries) ---------------------------------------------------
    async def close_session(self, namespace: str, session_id: str, now: datetime | None = None) -> Summary | None:
        """Close a session and summarize it from its first turn; the new summary replaces the
        previous one (version + 1, the old one expired and kept). None: the session has no turns."""
        async with self.open_summarizer() as summarizer:
            return await summarizer.close(namespace, session_id, now)

    async def summarize_due(self, namespace: str | None = None, now: datetime | None = None) -> list[Summary]:
        """Summarize every due session of `namespace` (None: all): idle for `[session] idle_minutes`
        (closed then) or grown by `summarize_every_messages` since its last summary."""
        async with self.open_summarizer() as summarizer:
            return await summarizer.due(namespace, now)

    async def summaries(self, namespace: str, session_id: str, include_expired: bool = False) -> list[Summary]:
        """The current summaries of a session (session, windows, rollups); with `include_expired`
        also the versions they replaced."""
        rows = await self.store.read("summaries/of_session", namespace=namespace, session_id=session_id,
                                     include_expired=include_expired)
        return [summary_from_props(r["summary"]) for r in rows]

    # -- retrieval (queries/retrieve.py, queries/recall.py) -------------------------------------
    def _retriever(self) -> Retriever:
        if self._retriever_cache is None or self._retriever_cache.store is not self.store:
            self._retriever_cache = Retriever(self.store, self.embedder, self.settings.memory.retrieval,
                                              reranker_source(self.settings), self.settings.memory.vectors,
                                              self.fallback_embedder, self.late_encoder)
        return self._retriever_cache

    def _recipe(self, recipe: str | Recipe | None) -> Recipe:
        cfg = self.settings.memory.retrieval
        if recipe is not None and not isinstance(recipe, str):
            return pick(recipe)  # a Recipe object is used as given
        name = recipe or cfg.strategy
        if name != cfg.strategy:  # an explicitly named other recipe (a baseline) is not reranked
            return pick(name, cfg.sessions, cfg.turns_per_session, session_signal_weight=cfg.session_signal_weight)
        return pick(name, cfg.sessions, cfg.turns_per_session, cfg.rerank.reranker, cfg.rerank.top_n,
                    cfg.session_signal_weight, cfg.rerank.keep_fused)

    async def search_turns(
        self, namespace: str, query: str, k: int = 10, recipe: str | Recipe | None = None,
        as_of: datetime | None = None, now: datetime | None = None,
    ) -> list[RankedTurn]:
        """The turns of `namespace` that best answer `query`, by a retrieval recipe: the configured
        `[memory.retrieval] strategy` (hierarchical) unless `recipe` names another ("flat": dense
        only, "bm25": words only, "hybrid", "hierarchical"; "vector" and "fulltext" are the old names
        of flat and bm25) or is a `kg.queries.recipes.Recipe`. `as_of` hides later turns; `now` is when
        the question is asked: "last month" or "two weeks ago" count back from it (default: `as_of`,
        else the present). Every door
        (HTTP GET /search, MCP search_turns, `kg search`) runs this. While the primary embedder is
        down, each hit says `degraded` and why (docs/retrieval.md, "Embedding fallback")."""
        ask = SearchRequest.of(locals())
        chosen = self._recipe(recipe)
        found = await self._retriever().search(namespace, ask.query, ask.k, chosen, ask.as_of, now=ask.now)
        return await ranked_turns(self.store, found, chosen)

    async def retrieve(
        self, namespace: str, query: str, k: int = 10, recipe: str | Recipe | None = None,
        as_of: datetime | None = None, now: datetime | None = None,
    ) -> list[RankedTurn]:
        """The same as `search_turns` (its name in the retrieval papers)."""
        return await self.search_turns(namespace, query, k, recipe, as_of, now)

    async def search_sessions(
        self, namespace: str, query: str, k: int = 5, recipe: str | Recipe | None = None,
        as_of: datetime | None = None, now: datetime | None = None,
    ) -> list[SessionHit]:
        """Session arcs for "what did we discuss about X?": sessions with their summary and best turns
        (`as_of`, `now`: as in `search_turns`)."""
        ask = SearchRequest.of(locals())
        return await search_sessions(self._retriever(), namespace, ask.query, ask.k, self._recipe(recipe), ask.as_of,
                                     ask.now)

    async def search_memories(
        self, namespace: str, query: str, k: int = 10, as_of: datetime | None = None, now: datetime | None = None,
    ) -> list[MemoryHit]:
        """Facts and turns for "what did we decide about X?", one score each (see `recall`)."""
        return await self._recall(namespace, SearchRequest.of(locals()), frozenset({"turn", "fact"}))

    async def recall(self, namespace: str, query: str, k: int = 10, as_of: datetime | None = None,
                     now: datetime | None = None) -> list[MemoryHit]:
        """Turns, facts and summaries ranked by one score: similarity + graph relevance (closeness to
        the entities the query names) + fact confidence, weighted by `[memory.retrieval.recall]`.
        Superseded facts are excluded; `as_of` asks about that moment (later turns hidden), `now` is
        when the question is asked (facts holding then; "last month" counts back from it)."""
        return await self._recall(namespace, SearchRequest.of(locals()))

    async def _recall(self, namespace: str, ask: SearchRequest, kinds: frozenset[str] | None = None) -> list[MemoryHit]:
        memory = self.settings.memory
        extra = {} if kinds is None else {"kinds": kinds}
        return await recall(self._retriever(), memory.confidence, memory.retrieval.recall, namespace, ask.query, ask.k,
                            self._recipe(None), ask.as_of, now=ask.now, **extra)

    # -- corrections and rules -------------------------------------------------------------------
    async def add_correction(
        self,
        namespace: str,
        session_id: str,
        rule_text: str,
        original_behavior: str | None = None,
        corrected_behavior: str | None = None,
        correction_type: CorrectionType = "preference",
        seen_at: datetime | None = None,
        evidence_turn_ids: Iterable[str] = (),
        confidence: float | None = None,
        trust: Trust = "trusted",
    ) -> CorrectionResult:
        """Record that the user corrected the agent in `session_id` (the extractor's path too). Decides
        added / reinforced / invalidated / noop against the namespace's similar corrections and
        graduates the affected one. A session not stored yet is created. An untrusted one
        (`trust="untrusted"`) never reinforces, invalidates or graduates until confirmed (`confirm`).
        See docs/corrections.md."""
        from kg.ingest.corrections.writer import CorrectionWriter  # here: importing it first must not cycle via kg

        correction = CorrectionReport.of(locals())
        check_namespace(namespace)
        writer = CorrectionWriter(self.store, self.embedder, self.settings.memory.corrections, self.correction_judge,
                                  self.settings.memory.vectors)
        return await writer.add(namespace, correction)

    async def confirm_rule(self, namespace: str, correction_id: str, at: datetime | None = None) -> CorrectionView:
        """The user explicitly confirmed a correction: it becomes a rule (and decays slowly)."""
        cfg = self.settings.memory.corrections
        from kg.ingest.corrections.writer import CorrectionWriter

        await CorrectionWriter(self.store, self.embedder, cfg).confirm(namespace, correction_id, at)
        view = await correction_queries.correction(self.store, cfg, namespace, correction_id, at)
        assert view is not None
        return view

    async def core_rules(self, namespace: str, at: datetime | None = None) -> CoreRules:
        """Rules and strong preferences standing at `at` (None: now); `.render()` gives a prompt block."""
        return await correction_queries.core_rules(self.store, self.settings.memory.corrections, namespace, at)

    async def corrections(
        self, namespace: str, status: CorrectionStatus | None = None, include_invalidated: bool = False
    ) -> list[CorrectionView]:
        """Browse a namespace's corrections, most reinforced first, weights as of now."""
        return await correction_queries.corrections(self.store, self.settings.memory.corrections, namespace,
                                                    status, include_invalidated)

    async def correction_clusters(self, namespace: str, limit: int = 10) -> list[ClusterView]:
        """The most reinforced clusters found by the last `maintain_corrections`."""
        return await correction_queries.top_clusters(self.store, namespace, limit)

    async def maintain_corrections(self, namespace: str, now: datetime | None = None) -> MaintenanceReport:
        """The nightly job: cluster, merge near-duplicates, resolve contradictions, promote and decay;
        writes a JSON and a markdown report under `[memory.corrections.clustering] report_dir`."""
        from kg.ingest.corrections.maintain import maintain

        return await maintain(self.store, self.settings.memory.corrections, namespace, now, self.correction_labeler)

    # -- post-session indexing (ingest/indexing.py) --------------------------------------------
    async def index_session(self, namespace: str, session_id: str) -> SessionIndexReport:
        """Extract one session with the `[memory.indexing] backend` and write, in one transaction,
        its entities (through the dedup resolver), MENTIONS links, facts, relationships, corrections
        and decisions. Idempotent. When extraction fails nothing is written and the session is marked
        `extraction_failed`. See docs/extraction.md."""
        async with self.open_indexer() as indexer:
            return await indexer.index_session(namespace, session_id)

    async def index_pending(self, namespace: str | None = None, limit: int | None = None) -> IndexReport:
        """Index the sessions that are closed (or idle for `[session] idle_minutes`) and not indexed by
        the current extractor, model and prompt version, grown since, or failed (retried up to
        `[memory.indexing] max_failures` times). `namespace` None: every namespace."""
        async with self.open_indexer() as indexer:
            return await indexer.index_pending(namespace, limit)

    # -- background jobs -------------------------------------------------------------------------
    async def enqueue_job(
        self, kind: str, namespace: str, target: str, params: Mapping[str, Any] | None = None, rerun: bool = False
    ) -> Job:
        """Queue background work for the workers (`kg serve`, `kg jobs run-once`). Idempotent: one
        job per kind, namespace and target; a done job runs again only with `rerun`. Kinds are the
        registered ones (`kg.jobs.kinds.KINDS`). See docs/operations.md."""
        if kind not in KINDS:
            raise ValueError(f"unknown job kind {kind!r}; registered: {', '.join(sorted(KINDS))}")
        queue = JobQueue(self.store, self.settings.jobs)
        return (await queue.enqueue(kind, namespace, target, dict(params or {}), rerun))[0]

    async def jobs(
        self, status: str | None = None, kind: str | None = None, namespace: str | None = None, limit: int = 50
    ) -> list[Job]:
        """Jobs, newest first; `status` is queued, running, done or dead (the dead letters)."""
        return await JobQueue(self.store, self.settings.jobs).list(status, kind, namespace, limit)

    async def job(self, job_id: str) -> Job | None:
        return await JobQueue(self.store, self.settings.jobs).get(job_id)

    async def retry_job(self, job_id: str) -> Job | None:
        """Queue a dead (or waiting, or done) job to run now with fresh attempts; its saved passes
        are kept, so it resumes. None when there is no such job or it is running."""
        return await JobQueue(self.store, self.settings.jobs).retry(job_id)

    async def run_jobs(self, sweep: bool = True, wait_s: float = 0.0, namespace: str | None = None) -> RunReport:
        """Enqueue what the schedules find due (with `sweep`), then run jobs in this process until
        none is due; `wait_s` also waits that long for retries and expired leases; `namespace`
        limits both to one namespace."""
        return await run_once(self, sweep, wait_s, namespace)

    # -- forgetting (kg._erasure; docs/forgetting.md) ----------------------------------------------
    async def erase_session(self, namespace: str, session_id: str, by: str = LOCAL) -> Erasure:
        """Delete a session, its turns (and context keys), summaries, decisions and jobs, and undo what
        it caused: facts, fact events, relationships and corrections whose only evidence it was go,
        and every fact or relationship they had ended or superseded holds again (a rewind event says
        why); corrections also stated elsewhere are graduated again from what is left; entities lose
        the aliases and attributes only it taught, and go when nothing refers to them any more.
        KeyError: no such session."""
        return await _erasure.erase_session(self.store, self.settings, namespace, session_id, by)

    async def erase_turn(self, namespace: str, turn_id: str, by: str = LOCAL) -> Erasure:
        """Delete one message and undo what it caused, as `erase_session` does for a session: what
        only it evidenced goes and is rewound, a correction only it stated leaves its session, the
        entities it mentioned are rebuilt from what remains. Its session's summaries and context keys
        quoted it: they are deleted and made again from the turns left (a session left with no turn
        goes). KeyError: no such turn."""
        return await _erasure.erase_turn(self.store, self.settings, namespace, turn_id, by, self.open_summarizer)

    async def erase_subject(self, namespace: str, subject: str, by: str = LOCAL) -> Erasure:
        """Delete every fact and fact event about `subject` (named as `remember` names it) and its
        fact slots, the facts that have it as their object, and its relationships both ways; the
        other subjects' facts and relationships it had ended hold again (rewound); the entity goes
        too when nothing else (a turn's mention) refers to it. KeyError: no such subject."""
        return await _erasure.erase_subject(self.store, self.settings, namespace, subject, by)

    async def erase_namespace(self, namespace: str, by: str = LOCAL) -> Erasure:
        """Delete everything of a namespace except its erasure records (in batches), then record
        this erase. KeyError: the namespace holds nothing."""
        return await _erasure.erase_namespace(self.store, namespace, by)

    async def erasures(self, namespace: str, limit: int = 100) -> list[Erasure]:
        """The namespace's erasure records, newest first."""
        return await _erasure.erasures(self.store, namespace, limit)

    async def delete_namespace(self, namespace: str) -> None:
        """Remove every node of a namespace, erasure records included, with no record of it (tests and
        benchmarks; irreversible). To forget a namespace, use `erase_namespace`."""
        await self.store.autocommit("namespaces/delete", namespace=namespace)

    # -- export and import of a namespace (kg._export; docs/export.md) ---------------------------
    async def export_namespace(self, namespace: str, subject: str | None = None,
                               vectors: bool = False) -> AsyncIterator[dict[str, Any]]:
        """The namespace's records: a header, its nodes, the edges between them, an end record.
        `subject`: only what is held about that subject (a data-access request, beside
        `erase_subject`). `vectors`: keep the embeddings (else an import re-embeds). KeyError: no
        such subject."""
        async for record in _export.export_namespace(self.store, namespace, subject, vectors):
            yield record

    async def import_records(self, namespace: str, records: Iterable[dict[str, Any]]) -> ImportReport:
        """Load exported records into `namespace` (any namespace, any database). Into another
        namespace than the exported one, ids get new values derived from both (ids are unique across
        namespaces); session ids stay. Idempotent: what is already there is kept, a second import
        creates nothing. ExportFormatError names the first bad line."""
        return await _export.import_records(self.store, self.embedder, self.settings, namespace, records,
                                            self.late_encoder)

    # -- a user's existing history (kg._history_import; docs/import.md) -------------------------
    async def import_claude_code(self, namespace: str, source: str | os.PathLike[str] | bytes, tools: bool = True,
                                 session_id: str | None = None) -> IngestReport:
        """Claude Code transcripts: a session file (`~/.claude/projects/<project>/<id>.jsonl`), a project
        folder of them, or one file's bytes. Each session keeps its id and its times; `tools`: the
        tool calls and their results as attachments of the answers (False: left out). `session_id`:
        for lines that carry none (default: the file's name; bytes need it then). Bad lines are in
        `rejected` (file:line)."""
        return await self._import(_history_import.claude_code(namespace, source, tools, session_id))

    async def import_chatgpt(self, namespace: str, source: str | os.PathLike[str] | bytes,
                             tools: bool = True) -> IngestReport:
        """ChatGPT's `conversations.json` (a data export): a session per conversation, with its id; each
        turn keeps its message's id and time. `tools`: the code it ran and what came back, as
        attachments of the answers. A bad conversation is in `rejected` (file:line) and the rest go in."""
        return await self._import(_history_import.chatgpt(namespace, source, tools))

    async def import_messages(self, namespace: str, source: str | os.PathLike[str] | bytes, format: Format,
                              session_id: str | None = None, start: datetime | None = None,
                              tools: bool = True) -> IngestReport:
        """Message lists in OpenAI's (`format="openai"`) or Anthropic's (`"anthropic"`) shape: a
        conversation, several, or JSON Lines of them. `session_id`: of a conversation without an id
        of its own (default: the file's name). Messages without a time of their own follow `start`
        (default for a file: its modification time), a second apart."""
        return await self._import(_history_import.messages(namespace, source, format, session_id, start, tools))

    async def _import(self, items: Iterable[_history_import.Item]) -> IngestReport:
        return await _history_import.write(self._turn_writer(), items)

    # -- review: why, what changed, undo, confirm (kg._review; docs/trust.md) -------------------
    async def explain(self, namespace: str, id: str) -> Explanation:
        """Why a fact version (`fact_...`) or relationship version (`rel_...`) is current, ended,
        superseded or expired: the version, its confidence in parts, and the chain of events of its
        subject+predicate that made it so, each with its source, time, trust, what it does now and
        the turns it quotes. KeyError: no such fact or relationship."""
        return await _review.explain(self.store, self.settings, namespace, id)

    async def changes(self, namespace: str, since: datetime | None = None, limit: int = 100) -> Changes:
        """What changed a statement since `since` (None: ever), newest first: every event that
        superseded, retracted or held one (an untrusted statement waiting for `confirm`), every
        withdrawal, rewind (an erase), revert and confirmation, each with the confidence of its
        source; the corrections invalidated automatically, with the similarity that decided it; and
        the untrusted mentions of trusted entities held for `confirm` (entity merges).
        `limit` bounds the subject+predicates (and the corrections) read."""
        return await _review.changes(self.store, self.settings, namespace, since, limit)

    async def revert(self, namespace: str, event_id: str, by: str = LOCAL) -> ChangeResult:
        """Undo one change by recording a new event (nothing is rewritten): a fact or relationship
        event that superseded or retracted a statement is withdrawn (the timeline is replayed as
        if it had never been learned: the old value holds again); a withdrawal, revert or
        confirmation is taken back the same way; a correction invalidated automatically
        (contradicted, superseded, merged) holds again. KeyError: no such event; FieldError: it
        changed nothing that a revert could undo (or an erase, which cannot be undone)."""
        return await _review.revert(self.store, self.settings, namespace, event_id, by)

    async def confirm(self, namespace: str, id: str, by: str = LOCAL) -> ChangeResult:
        """A person confirms an untrusted statement: from now on it counts as trusted and is handled
        like any other (an untrusted "I moved to Paris" held against a trusted "lives in Lisbon" now
        supersedes it), by a confirmation event. `id`: the untrusted fact or relationship event (its
        id is in `changes` and in what `remember` answered) or the untrusted correction, which then
        graduates by what it earned, or a held entity merge (`mrg_...`, in `changes`): the untrusted
        mentions join the trusted entity. KeyError: no such id; FieldError: it is trusted already."""
        return await _review.confirm(self.store, self.settings, namespace, id, by)
