"""The public facade: `AsyncMemory` (the implementation) and `Memory` (the same, synchronous).

    async with AsyncMemory() as memory:
        await memory.add_message("acme", "user", "I moved to Lisbon", ts=datetime.now(UTC))
        hits = await memory.search_turns("acme", "where does the user live?", k=5)
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping, Sequence

from ingest.facts import FactWriter, PredicateResolver
from ingest.turns import TurnWriter
from kg.config import Settings, api_key_from_env, load_settings
from kg.embeddings import Embedder, embedder_for
from kg.facts_models import FactView, RememberResult
from kg.models import Attachment, IngestReport, Message, Session, Turn, check_namespace
from kg.recall_models import MemoryHit, RankedTurn, SessionHit, Summary, summary_from_props
from kg.memory_erase import EraseFacade
from kg.memory_relationships import RelationshipsFacade
from kg.memory_rules import RulesFacade
from kg.memory_work import WorkFacade
from kg.store import Store
from queries import facts as fact_queries

if TYPE_CHECKING:
    from ingest.corrections.maintain import ClusterLabeler
    from ingest.corrections.policy import CorrectionJudge


def _llm_configured(settings: Settings) -> bool:
    """Whether `[memory.indexing] backend` resolves to an LLM service, the rule `extractor_for` uses."""
    backend = settings.memory.indexing.backend
    if backend == "auto":
        return api_key_from_env("anthropic") is not None
    return backend in settings.llm.services


class AsyncMemory(RulesFacade, RelationshipsFacade, WorkFacade, EraseFacade):
    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or load_settings()
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._writer: TurnWriter | None = None
        self.predicate_resolver: PredicateResolver | None = None  # unknown predicates: "many" without one
        self.correction_judge: CorrectionJudge | None = None  # AUDN by an LLM; None: the deterministic policy
        self.correction_labeler: ClusterLabeler | None = None  # cluster names by an LLM; None: keyphrases
        self.summarizer: Any = None  # ingest.summaries Summarizer; None: chosen by [memory.indexing] backend
        self.entity_adjudicator: Any = None  # dedup stage 5 (mention, candidates) -> id; None: from the settings
        self._llm_hooks: list[Any] = []  # the hooks above that open() set from [memory.indexing] backend

    async def __aenter__(self) -> "AsyncMemory":
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        """Connect (starting the managed local Neo4j when no URI is configured), load the
        embedder, apply pending migrations."""
        if self._store is not None:
            return
        embedder_task = asyncio.create_task(asyncio.to_thread(embedder_for, self.settings.embedding))
        try:
            store = await Store.connect(self.settings)
        except BaseException:
            embedder_task.cancel()
            raise
        try:
            self._embedder = await embedder_task
            await store.migrate(self._embedder.name, self._embedder.dim)
        except BaseException:
            await store.close()
            raise
        self._store = store
        if _llm_configured(self.settings):  # the three hooks left None get their LLM implementation
            from ingest.llm_judges import install  # loads the LLM SDKs: only when an LLM is configured

            self._llm_hooks = install(self)
        self._writer = TurnWriter(store, self._embedder, self.settings)

    async def close(self) -> None:
        hooks, self._llm_hooks = self._llm_hooks, []
        for hook in hooks:
            for attr in ("predicate_resolver", "correction_judge", "correction_labeler"):
                if getattr(self, attr) is hook:
                    setattr(self, attr, None)
            await hook.aclose()
        retriever, self._retriever_cache = getattr(self, "_retriever_cache", None), None
        if retriever is not None:
            await retriever.aclose()  # rerankers: worker threads, LLM clients
        if self._store is not None:
            await self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("memory is not open: use `async with AsyncMemory() as memory` or await open()")
        return self._store

    @property
    def embedder(self) -> Embedder:
        self.store  # noqa: B018 - raises when not open
        assert self._embedder is not None
        return self._embedder

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
    ) -> Turn:
        """Store one message. Without `session_id` it joins the namespace's current session, or
        opens a new one after `[session] gap_minutes` of silence. `attachments`: what was shared
        with it ({kind, caption, url?}; the captions are searchable). Returns the stored turn."""
        message = Message(namespace=namespace, role=role, text=text, ts=ts, speaker=speaker, session_id=session_id,
                          attachments=list(attachments))
        writer = TurnWriter(self.store, self.embedder, self.settings)
        await writer.write([message])
        turn_id = writer.ids.last_id
        rows = await self.store.read("queries/turn_get", namespace=namespace, id=turn_id)
        return _turn(rows[0]["turn"])

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
        return await TurnWriter(self.store, self.embedder, self.settings).write(messages, on_batch)

    # -- read -------------------------------------------------------------------------------
    async def session(self, namespace: str, session_id: str) -> Session | None:
        rows = await self.store.read("queries/session_get", namespace=namespace, session_id=session_id)
        return _session(rows[0]["session"]) if rows else None

    async def sessions(self, namespace: str, limit: int = 100) -> list[Session]:
        rows = await self.store.read("queries/sessions_list", namespace=namespace, limit=limit)
        return [_session(r["session"]) for r in rows]

    async def turns(self, namespace: str, session_id: str) -> list[Turn]:
        rows = await self.store.read("queries/session_turns", namespace=namespace, session_id=session_id)
        return [_turn(r["turn"]) for r in rows]

    # -- facts over time ----------------------------------------------------------------------
    async def remember(
        self,
        namespace: str,
        subject: str,
        predicate: str,
        object: str,
        valid_from: datetime | None = None,
        recorded_at: datetime | None = None,
        source: Literal["stated", "observed", "inferred", "system"] = "stated",
        op: Literal["assert", "retract"] = "assert",
        evidence_turn_ids: Iterable[str] = (),
        extractor: str | None = None,
        prompt_version: str | None = None,
        subject_type: str = "other",
        object_type: str | None = None,
    ) -> RememberResult:
        """Learn (`assert`) or unlearn (`retract`) that `subject predicate object` from `valid_from`
        (default: now), recorded at transaction time `recorded_at` (default: now). A functional
        predicate's new value supersedes the old one; the same value reinforces it; nothing is
        deleted. `object_type` makes the object an entity. See docs/facts-over-time.md."""
        check_namespace(namespace)
        writer = FactWriter(self.store, self.settings, self.predicate_resolver)
        return await writer.remember(
            namespace, subject, predicate, object, valid_from=valid_from, recorded_at=recorded_at,
            source=source, op=op, evidence_turn_ids=evidence_turn_ids, extractor=extractor,
            prompt_version=prompt_version, subject_type=subject_type, object_type=object_type,
        )

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
        return await fact_queries.facts(self.store, self.settings.memory.confidence, namespace, subject,
                                        predicate, as_of, known_at, include_superseded)

    async def history(
        self,
        namespace: str,
        subject: str,
        predicate: str | None = None,
        known_at: datetime | None = None,
        include_expired: bool = False,
    ) -> list[FactView]:
        """Every interval of the subject's facts, in valid-time order, with what superseded each."""
        return await fact_queries.history(self.store, self.settings.memory.confidence, namespace, subject,
                                          predicate, known_at, include_expired)

    # -- session summaries (ingest/summaries) ---------------------------------------------------
    def _session_summarizer(self) -> Any:
        from ingest.summaries.llm import summarizer_for
        from ingest.summaries.writer import SessionSummarizer

        if self.summarizer is None:
            self.summarizer = summarizer_for(self.settings, self.embedder, self.store)
        return SessionSummarizer(self.store, self.embedder, self.settings, self.summarizer)

    async def close_session(self, namespace: str, session_id: str, now: datetime | None = None) -> Summary | None:
        """Close a session and summarize it from its first turn; the new summary replaces the
        previous one (version + 1, the old one expired and kept). None: the session has no turns."""
        return await self._session_summarizer().close(namespace, session_id, now)

    async def summarize_due(self, namespace: str | None = None, now: datetime | None = None) -> list[Summary]:
        """Summarize every due session of `namespace` (None: all): idle for `[session] idle_minutes`
        (closed then) or grown by `summarize_every_messages` since its last summary."""
        return await self._session_summarizer().due(namespace, now)

    async def summaries(self, namespace: str, session_id: str, include_expired: bool = False) -> list[Summary]:
        """The current summaries of a session (session, windows, rollups); with `include_expired`
        also the versions they replaced."""
        rows = await self.store.read("queries/summaries_of_session", namespace=namespace, session_id=session_id,
                                     include_expired=include_expired)
        return [summary_from_props(r["summary"]) for r in rows]

    # -- retrieval (queries/retrieve.py, queries/recall.py) -------------------------------------
    def _retriever(self) -> Any:
        from kg.rerankers import reranker_source
        from queries.retrieve import Retriever

        if getattr(self, "_retriever_cache", None) is None or self._retriever_cache.store is not self.store:
            self._retriever_cache = Retriever(self.store, self.embedder, self.settings.memory.retrieval,
                                              reranker_source(self.settings))
        return self._retriever_cache

    def _recipe(self, recipe: Any) -> Any:
        from queries.recipes import recipe as pick

        cfg = self.settings.memory.retrieval
        if recipe is not None and not isinstance(recipe, str):
            return pick(recipe)  # a Recipe object is used as given
        name = recipe or cfg.strategy
        if name != cfg.strategy:  # an explicitly named other recipe (a baseline) is not reranked
            return pick(name, cfg.sessions, cfg.turns_per_session)
        return pick(name, cfg.sessions, cfg.turns_per_session, cfg.rerank.reranker, cfg.rerank.top_n)

    async def search_turns(
        self, namespace: str, query: str, k: int = 10, recipe: Any = None, as_of: datetime | None = None
    ) -> list[RankedTurn]:
        """The turns of `namespace` that best answer `query`, by a retrieval recipe: the configured
        `[memory.retrieval] strategy` (hierarchical) unless `recipe` names another ("flat": dense
        only, "bm25": words only, "hybrid", "hierarchical"; "vector" and "fulltext" are the old names
        of flat and bm25) or is a `queries.recipes.Recipe`. `as_of` hides later turns. Every door
        (HTTP GET /search, MCP search_turns, `kg search`) runs this."""
        from queries.recall import ranked_turns

        chosen = self._recipe(recipe)
        found = await self._retriever().search(namespace, query, k, chosen, as_of)
        return await ranked_turns(self.store, found, chosen)

    async def retrieve(
        self, namespace: str, query: str, k: int = 10, recipe: Any = None, as_of: datetime | None = None
    ) -> list[RankedTurn]:
        """The same as `search_turns` (its name in the retrieval papers)."""
        return await self.search_turns(namespace, query, k, recipe, as_of)

    async def search_sessions(
        self, namespace: str, query: str, k: int = 5, recipe: Any = None, as_of: datetime | None = None
    ) -> list[SessionHit]:
        """Session arcs for "what did we discuss about X?": sessions with their summary and best turns."""
        from queries.recall import search_sessions

        return await search_sessions(self._retriever(), namespace, query, k, self._recipe(recipe), as_of)

    async def search_memories(
        self, namespace: str, query: str, k: int = 10, as_of: datetime | None = None
    ) -> list[MemoryHit]:
        """Facts and turns for "what did we decide about X?", one score each (see `recall`)."""
        from queries.recall import recall

        return await recall(self._retriever(), self.settings.memory.confidence, self.settings.memory.retrieval.recall,
                            namespace, query, k, self._recipe(None), as_of, frozenset({"turn", "fact"}))

    async def recall(self, namespace: str, query: str, k: int = 10, as_of: datetime | None = None) -> list[MemoryHit]:
        """Turns, facts and summaries ranked by one score: similarity + graph relevance (closeness to
        the entities the query names) + fact confidence, weighted by `[memory.retrieval.recall]`.
        Superseded facts are excluded; `as_of` asks about that moment."""
        from queries.recall import recall

        return await recall(self._retriever(), self.settings.memory.confidence, self.settings.memory.retrieval.recall,
                            namespace, query, k, self._recipe(None), as_of)

    async def delete_namespace(self, namespace: str) -> None:
        """Remove every node of a namespace, erasure records included, with no record of it (tests and
        benchmarks; irreversible). To forget a namespace, use `erase_namespace`."""
        await self.store.autocommit("queries/namespace_delete", namespace=namespace)


def _native(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.to_native() if hasattr(v, "to_native") else v) for k, v in props.items()}


def _turn(props: Mapping[str, Any]) -> Turn:
    return Turn.model_validate(_native(props))


def _session(props: Mapping[str, Any]) -> Session:
    return Session.model_validate(_native(props))


class Memory:
    """`AsyncMemory`'s methods, synchronous: a private event loop runs in a background thread."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._async = AsyncMemory(settings)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kg-memory-loop", daemon=True)
        self._thread.start()

    @property
    def settings(self) -> Settings:
        return self._async.settings

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def __enter__(self) -> "Memory":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._loop.is_running():
            self._run(self._async.close())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()


def _synchronous(name: str) -> Callable[..., Any]:
    method = getattr(AsyncMemory, name)

    @functools.wraps(method)
    def call(self: Memory, *args: Any, **kwargs: Any) -> Any:
        return self._run(getattr(self._async, name)(*args, **kwargs))

    return call


for _name, _member in inspect.getmembers(AsyncMemory, inspect.iscoroutinefunction):
    if not _name.startswith("_") and _name != "close":
        setattr(Memory, _name, _synchronous(_name))
