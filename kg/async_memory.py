"""`AsyncMemory`, the public facade (`Memory` in `kg.memory` is the same, synchronous).

    async with AsyncMemory() as memory:
        await memory.add_message("acme", "user", "I moved to Lisbon", ts=datetime.now(UTC))
        hits = await memory.search_turns("acme", "where does the user live?", k=5)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

from kg.ingest.facts import FactWriter
from kg.ingest.temporal import Origin
from kg.ingest.turns import TurnWriter, VectorSink
from kg.memory_erase import EraseFacade
from kg.memory_export import ExportFacade
from kg.memory_history import HistoryFacade
from kg.memory_relationships import RelationshipsFacade
from kg.memory_rules import RulesFacade
from kg.memory_trust import TrustFacade
from kg.memory_work import WorkFacade
from kg.rerankers import reranker_source
from kg.queries import facts as fact_queries
from kg.queries.recall import ranked_turns, recall, search_sessions
from kg.queries.recipes import Recipe
from kg.queries.recipes import recipe as pick
from kg.queries.retrieve import Retriever
from kg.core.settings.tree import Settings
from kg.core.models.facts import FactView, RememberResult
from kg.core.models.turns import Attachment, IngestReport, Message, Turn, check_namespace
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit, Summary, summary_from_props
from kg.core.models.requests import FactAssertion, FactHistoryQuery, FactQuery, SearchRequest
from kg.core.store.values import native_props
from kg.core.models.vocabulary import Trust


class AsyncMemory(RulesFacade, RelationshipsFacade, WorkFacade, EraseFacade, ExportFacade, HistoryFacade, TrustFacade):
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
        return TurnWriter(self.store, self.embedder, self.settings, self.fallback_embedder, self.vector_sink())

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
        source: Literal["stated", "observed", "inferred", "system"] = "stated",
        op: Literal["assert", "retract"] = "assert",
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
                                              self.fallback_embedder)
        return self._retriever_cache

    def _recipe(self, recipe: str | Recipe | None) -> Recipe:
        cfg = self.settings.memory.retrieval
        if recipe is not None and not isinstance(recipe, str):
            return pick(recipe)  # a Recipe object is used as given
        name = recipe or cfg.strategy
        if name != cfg.strategy:  # an explicitly named other recipe (a baseline) is not reranked
            return pick(name, cfg.sessions, cfg.turns_per_session, session_signal_weight=cfg.session_signal_weight)
        return pick(name, cfg.sessions, cfg.turns_per_session, cfg.rerank.reranker, cfg.rerank.top_n,
                    cfg.session_signal_weight)

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

    async def delete_namespace(self, namespace: str) -> None:
        """Remove every node of a namespace, erasure records included, with no record of it (tests and
        benchmarks; irreversible). To forget a namespace, use `erase_namespace`."""
        await self.store.autocommit("namespaces/delete", namespace=namespace)
