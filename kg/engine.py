"""What every door and the job workers share: the open services (store, embedder, settings) and
the write-time hooks, put together once.

`Engine` is the bottom of `kg/`: `AsyncMemory` (the public facade) is an engine with the API on top,
and the job handlers (`kg.jobs.kinds`) take an engine, so the worker never reaches back up into the
facade. The write path (`ingest/`) and the read path (`queries/`) receive these services as
arguments, never the engine.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, AsyncIterator

from kg.core.embedders.base import Embedder
from kg.core.embedders.configured import embedder_for, fallback_for, late_for
from kg.core.llm.transport import llm_configured
from kg.core.models.turns import Session
from kg.core.models.values import native_props
from kg.core.settings.tree import Settings, load_settings
from kg.core.store.store import DatabaseUnreachable, Store, StoreError, unavailable
from kg.ingest.corrections.writer import CorrectionWriter
from kg.ingest.dedup.adjudication import adjudicator_for
from kg.ingest.dedup.neo4j_resolver import GraphResolver
from kg.ingest.extraction.extractor import Extractor
from kg.ingest.facts import FactWriter, PredicateResolver
from kg.ingest.indexing import SessionIndexer
from kg.ingest.relationships import RelationshipWriter
from kg.ingest.session_graph import SessionGraphWriter
from kg.ingest.summaries.writer import SessionSummarizer
from kg.ingest.turns import VectorSink

if TYPE_CHECKING:
    from kg.core.embedders.late import LateEncoder
    from kg.ingest.corrections.maintain import ClusterLabeler
    from kg.ingest.corrections.policy import CorrectionJudge


log = logging.getLogger(__name__)

class Engine:
    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or load_settings()
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._fallback: Embedder | None = None  # [embedding] fallback, when the primary is remote
        self._late: LateEncoder | None = None  # [embedding] late: token vectors of turn keys
        self.predicate_resolver: PredicateResolver | None = None  # unknown predicates: "many" without one
        self.correction_judge: CorrectionJudge | None = None  # AUDN by an LLM; None: the deterministic policy
        self.correction_labeler: ClusterLabeler | None = None  # cluster names by an LLM; None: keyphrases
        self.summarizer: Any = None  # kg.ingest.summaries Summarizer; None: chosen by [memory.indexing] backend
        self.entity_adjudicator: Any = None  # dedup stage 5 (mention, candidates) -> id; None: from the settings
        self._llm_hooks: list[Any] = []  # the hooks above that open() set from [memory.indexing] backend
        self._waiting = False  # started (`start`) before the database could be reached
        self._reopening: asyncio.Task[None] | None = None
        # the event loop that owns the database connection, once open: a door used from other threads
        # (the LangGraph store's sync calls) hands its work to it
        self.loop: asyncio.AbstractEventLoop | None = None

    async def open(self, warm: bool = False) -> None:
        """Connect (starting the managed local Neo4j when no URI is configured), make the
        embedder, apply pending migrations. `warm`: load the embedder's weights too, while the
        connection is made (a service or `kg mcp` pays the load at start, not on its first search;
        a one-shot command that embeds nothing does not pay it)."""
        if self._store is not None:
            return
        embedder_task = None if self._embedder is not None else \
            asyncio.create_task(asyncio.to_thread(_embedder, self.settings, warm))
        try:
            store = await Store.connect(self.settings)
        except BaseException:
            if embedder_task is not None:
                embedder_task.cancel()
            raise
        try:
            if embedder_task is not None:
                self._embedder = await embedder_task
            embedder = self.embedder
            await store.migrate(embedder.name, embedder.dim)
            self._fallback = await asyncio.to_thread(fallback_for, self.settings.embedding)
            self._late = await asyncio.to_thread(_late_encoder, self.settings, warm)
            if self._fallback is not None:
                await store.ensure_fallback_space(self._fallback.name, self._fallback.dim)
        except BaseException:
            await store.close()
            raise
        self._store = store
        self.loop = asyncio.get_running_loop()
        if llm_configured(self.settings):  # the three hooks left None get their LLM implementation
            self._install_llm_hooks()

    async def start(self, warm: bool = False) -> None:
        """`open`, for a service (`kg serve`, the HTTP app): a database that cannot be reached yet
        (down, or still starting) does not stop it. Until the database answers, every use of the
        store raises `DatabaseUnreachable` at once (HTTP answers 503 with Retry-After, MCP a tool
        error with the reason) and starts one attempt to open in the background."""
        try:
            await self.open(warm)
        except Exception as exc:
            if not unavailable(exc) or isinstance(exc, StoreError) and not isinstance(exc, DatabaseUnreachable):
                raise  # wrong credentials, another embedding space: waiting cannot help
            log.warning("%s; starting anyway: requests answer 'database unavailable' until it can be reached", exc)
            self._waiting = True
            if self._embedder is None:  # made now, so that opening later only connects
                self._embedder = await asyncio.to_thread(_embedder, self.settings, warm)

    async def _reopen(self) -> None:
        try:
            await self.open()
        except Exception as exc:  # noqa: BLE001 - the next use of the store tries again
            log.info("the database still cannot be opened: %s: %s", type(exc).__name__, exc)
        else:
            self._waiting = False
            log.warning("the database can be reached: serving")

    async def warm(self) -> None:
        """Load the embedder's weights now, off the event loop (a no-op when they are loaded)."""
        await asyncio.to_thread(_load, self.embedder)

    def _install_llm_hooks(self) -> None:
        from kg.ingest.llm_judges import llm_hooks  # loads the LLM SDKs: only when an LLM is configured

        hooks = llm_hooks(self.settings, self.predicate_resolver is None, self.correction_judge is None,
                          self.correction_labeler is None)
        self.predicate_resolver = self.predicate_resolver or hooks.predicate_resolver
        self.correction_judge = self.correction_judge or hooks.correction_judge
        self.correction_labeler = self.correction_labeler or hooks.correction_labeler
        self._llm_hooks = hooks.made

    async def close(self) -> None:
        if self._reopening is not None:
            self._reopening.cancel()
            self._reopening = None
        self._waiting = False
        hooks, self._llm_hooks = self._llm_hooks, []
        for hook in hooks:
            for attr in ("predicate_resolver", "correction_judge", "correction_labeler"):
                if getattr(self, attr) is hook:
                    setattr(self, attr, None)
            await hook.aclose()
        if self._store is not None:
            await self._store.close()
            self._store = None
            self.loop = None

    @property
    def store(self) -> Store:
        if self._store is None and self._waiting:
            if self._reopening is None or self._reopening.done():
                self._reopening = asyncio.get_running_loop().create_task(self._reopen())
            raise DatabaseUnreachable("the database cannot be reached yet; retry later")
        if self._store is None:
            raise RuntimeError("memory is not open: use `async with AsyncMemory() as memory` or await open()")
        return self._store

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self.store  # noqa: B018 - raises when not open
        assert self._embedder is not None
        return self._embedder

    @property
    def late_encoder(self) -> LateEncoder | None:
        """The late interaction encoder (`[embedding] late`), or None when it is off or not installed."""
        self.store  # noqa: B018 - raises when not open
        return self._late

    @property
    def fallback_embedder(self) -> Embedder | None:
        """What writes and queries fall back to when the primary embedder fails (kg.core.embedders.fallback)."""
        self.store  # noqa: B018 - raises when not open
        return self._fallback

    # -- what the write path is given -------------------------------------------------------------
    @asynccontextmanager
    async def open_indexer(self, extractor: Extractor | None = None) -> AsyncIterator[SessionIndexer]:
        """An indexer on this engine's store, embedder and hooks, with `extractor` or the
        `[memory.indexing] backend` one; what it opened is closed afterwards."""
        from kg.ingest.extraction.session import session_extractor_for  # loads the LLM SDKs: only when indexing

        settings = self.settings
        own = extractor is None
        extractor = extractor or session_extractor_for(settings, self.store)
        adjudicate = self.entity_adjudicator or adjudicator_for(settings)
        try:
            resolver = GraphResolver(settings.memory.entity_deduplication, self.embedder, adjudicate,
                                     embedding_model=self.embedder.name, vector_search=settings.memory.vectors)
            writer = SessionGraphWriter(
                self.store, resolver, FactWriter(self.store, settings, self.predicate_resolver),
                CorrectionWriter(self.store, self.embedder, settings.memory.corrections, self.correction_judge,
                                 settings.memory.vectors),
                RelationshipWriter(self.store, settings))
            yield SessionIndexer(self.store, settings, extractor, writer, adjudicate)
        finally:
            for closable in (extractor if own else None, adjudicate):
                close = getattr(closable, "aclose", None)
                if close is not None:
                    await close()

    @asynccontextmanager
    async def open_summarizer(self) -> AsyncIterator[SessionSummarizer]:
        """The session summarizer: the engine's own `summarizer` hook, or the one
        `[memory.indexing] backend` chooses, closed afterwards."""
        from kg.ingest.summaries.llm import summarizer_for  # loads the LLM SDKs: only when summaries run
        from kg.ingest.summaries.passes import passes_for

        passes = passes_for(self.settings)  # [memory.indexing] passes = 3: passes 2 and 3 of closed sessions
        summarizer = self.summarizer or summarizer_for(self.settings, self.embedder, self.store)
        try:
            yield SessionSummarizer(self.store, self.embedder, self.settings, summarizer, passes, self.vector_sink())
        finally:
            if passes is not None:
                await passes.aclose()
            close = getattr(summarizer, "aclose", None)
            if summarizer is not self.summarizer and close is not None:
                await close()

    def vector_sink(self) -> VectorSink | None:
        """Who keeps this process's turn vectors in memory, to be told what it writes (the facade's
        retriever); a bare engine (a job worker) searches nothing."""
        return None

    # -- what the jobs read --------------------------------------------------------------------------
    async def session(self, namespace: str, session_id: str) -> Session | None:
        rows = await self.store.read("sessions/get", namespace=namespace, session_id=session_id)
        return Session.model_validate(native_props(rows[0]["session"])) if rows else None


def _load(embedder: Embedder) -> None:
    load = getattr(embedder, "load", None)  # remote embedders have nothing to load
    if load is not None:
        load()


def _late_encoder(settings: Settings, warm: bool) -> LateEncoder | None:
    late = late_for(settings.embedding)
    if late is not None and warm:
        late.load()
    return late


def _embedder(settings: Settings, warm: bool) -> Embedder:
    embedder = embedder_for(settings.embedding)
    if warm:
        _load(embedder)
    return embedder
