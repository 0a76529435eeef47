"""Turn and session retrieval by recipe (see `kg.queries.recipes`).

Every recipe starts from ranked lists of turns (dense and/or BM25, over the turn's own text and/or its context
key), fused by reciprocal rank fusion. Hybrid recipes add the late list (the fused first turns by late
interaction, `kg.queries.late`) and boosts: the query's time window, the speakers it names, the role whose words
it asks for, a question's score passed on to a short reply to it. The hierarchical recipe then ranks sessions
(stage 1: the session's best turns fused with late interaction over its whole text as weighted where the namespace
is cached and a late encoder runs, else BM25 over that text where its words are cached, its summaries' BM25 and
dense matches as the recipe weights them, the time window) and re-ranks turns inside the top S sessions with the
session's rank as a prior (stage 2), T per session, twice: the second time with the query moved toward the first
round's best turns (`kg.queries.feedback`), then top K. A rerank stage (`kg.queries.rerank`) reorders the first
`rerank_top_n` of that list, its order fused with the fused one.

Small namespaces are searched by exact cosine over their vectors cached in memory
(`kg.queries.vectors`); large ones by the HNSW index: filtered to the tenant inside the index where
the server can (2026.02 and later), else a global index over-fetched by the namespace's share, with
the dense lists read again exactly inside the sessions stage 1 chose.

With tracing on, a search is a span (`retrieval`) over its stages (`retrieval.lists`, with stage 1's
summary lists, `retrieval.stage2`, `.rerank`, `.degraded`), each over its statements' and embedder calls'.

While the primary embedder is down (`[embedding] fallback`), a search embeds the query with the
fallback and fuses its dense list over the fallback vectors with BM25, whatever the recipe, and says
so (`Retrieval.degraded`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from kg.core.embedders.base import Embedder, embed_async
from kg.core.embedders.fallback import FallbackChain
from kg.core.embedders.late import LateEncoder
from kg.core.models.turns import Turn, as_utc
from kg.core.settings.memory import RetrievalSettings, VectorSearchSettings
from kg.core.store.store import Store
from kg.core.telemetry.hooks import span

from . import candidates as cand
from . import feedback
from .analysis import TimeWindow, addressed_role, content_terms, named_speakers, time_window
from .fusion import best_per_group, group_scores, ranking, rrf
from .late import late_list, session_late_list
from .recency import restated_first
from .recipes import RECIPES, Key, Method, Recipe
from .rerank import Reranker, local_reranker, passage, rerank
from .scores import fused, long_turns_cut
from .session_signals import session_signals
from .turns import bounded, lucene_escape
from .vectors import NamespaceVectors

log = logging.getLogger(__name__)


@dataclass
class Retrieval:
    """What one search found: turn ids with fused scores, and sessions ranked (stage 1, or by
    each session's best turn for single-stage recipes)."""

    turns: list[tuple[str, float]]
    sessions: list[tuple[str, float]]
    candidates: dict[str, cand.Candidate] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)
    window: TimeWindow | None = None
    vector: list[float] | None = None  # the query's, by the fallback embedder when `degraded`
    hydrated: dict[str, Turn] = field(default_factory=dict)  # turns already read in full (stage 2)
    degraded: str | None = None  # why the primary embedder was not used (kg.core.embedders.fallback)
    # rows of `retrieval/turn_vectors` already read (recency within a topic), by turn id
    vector_rows: dict[str, list] = field(default_factory=dict)


RerankerSource = Callable[[str], "Reranker | None"]


class Retriever:
    def __init__(self, store: Store, embedder: Embedder, settings: RetrievalSettings,
                 rerankers: RerankerSource | None = None, vector_search: VectorSearchSettings | None = None,
                 fallback: Embedder | None = None, late: LateEncoder | None = None) -> None:
        """`rerankers` builds the reranker of a kind ("cross-encoder", "voyage", "llm"), or None when
        it cannot; the default knows the local ones from `settings.rerank` (no LLM). `fallback` embeds
        the query when `embedder` fails; `late` scores the late list (None: no late list)."""
        self.store, self.embedder, self.settings = store, embedder, settings
        self.late = late
        self.chain = FallbackChain(embedder, fallback)
        self.vector_search = vector_search or VectorSearchSettings()
        self._make_reranker = rerankers or (lambda kind: local_reranker(kind, settings.rerank))
        self._rerankers: dict[str, Reranker | None] = {}
        self.sizes = cand.NamespaceSizes(store)
        self.vectors = NamespaceVectors(store, settings.vector_cache_turns, late_bytes=settings.vector_cache_late_mb
                                        << 20) if settings.vector_cache_turns else None
        # larger namespaces' postings alone, so their BM25 reads their own statistics too
        self.terms = NamespaceVectors(store, settings.keyword_cache_turns, vectors=False) \
            if settings.keyword_cache_turns else None

    async def aclose(self) -> None:
        """Release the rerankers built so far (worker threads, LLM clients)."""
        built, self._rerankers = self._rerankers, {}
        for reranker in built.values():
            close = getattr(reranker, "aclose", None)
            if close is not None:
                await close()

    async def embed(self, query: str) -> list[float]:
        [vector] = await embed_async(self.embedder, [query])
        return vector

    async def search(
        self, namespace: str, query: str, k: int, recipe: Recipe, as_of: datetime | None = None,
        vector: list[float] | None = None, on_sessions: Callable[[list[str]], None] | None = None,
        now: datetime | None = None,
    ) -> Retrieval:
        """`as_of` hides later turns; `now` is when the question is asked, what its relative time
        expressions count back from (default `as_of`, else the present). `on_sessions` hears the
        sessions in their final order as soon as stage 1 has ranked them, so a caller can read them
        while stage 2 runs (recall hydrates their summaries)."""
        if k < 1:
            raise ValueError("k must be at least 1")
        named_recipe = recipe.name if recipe.name in RECIPES else "custom"  # a span holds names of code only
        with span("retrieval", (("kg.recipe", named_recipe), ("kg.k", k))) as traced:
            found = await self._search(namespace, query, k, recipe, as_of, vector, on_sessions, now)
            traced.set("kg.retrieval.turns", len(found.turns))
            if found.degraded is not None:
                traced.set("kg.retrieval.degraded", True)
            return found

    async def _search(
        self, namespace: str, query: str, k: int, recipe: Recipe, as_of: datetime | None,
        vector: list[float] | None, on_sessions: Callable[[list[str]], None] | None, now: datetime | None,
    ) -> Retrieval:
        as_of = as_utc(as_of) if as_of is not None else None
        asked = as_utc(now) if now is not None else as_of or datetime.now(timezone.utc)
        window = time_window(query, asked) if recipe.boosts.time else None
        dense = any(m == "vector" for m, _ in recipe.lists)
        needs_vector = dense or recipe.two_stage
        words = bounded(content_terms(query) if recipe.content_words else query)
        lucene = lucene_escape(words)
        # The namespace's size (cached) decides exact search or the index, and so whose statistics BM25 reads.
        size, total = await self.sizes.counts(namespace)
        exact = self.vector_search.exact("turns", size)
        depth = max(self.settings.candidates if exact else self.settings.index_candidates, k)
        fetch = cand.index_fetch(self.store, self.vector_search, depth, size, total)
        alone = 0 < size == total  # the only tenant: BM25 needs no namespace clause

        def store_list(m: Method, key: Key) -> Awaitable[list[cand.Candidate]]:
            return cand.turn_list(self.store, m, key, namespace, vector=vector, lucene=lucene, depth=depth,
                                  exact=exact, as_of=as_of, fetch=fetch, alone=alone)

        # BM25 from the namespace's own documents: the vector cache's postings, or for a namespace too
        # large for exact search but within `keyword_max_turns`, the keyword-only cache's
        own = self.vectors if exact else (self.terms if size <= self.settings.keyword_max_turns else None)

        fresh: list[asyncio.Future] = []  # one refresh of the cached namespace for all this search's lists

        def current() -> asyncio.Future:
            if not fresh:
                fresh.append(asyncio.ensure_future(own.current(namespace)))  # type: ignore[union-attr]
            return fresh[0]

        def turn_job(m: Method, key: Key) -> Awaitable[list[cand.Candidate]]:
            if m == "vector" and exact and own is not None:  # own is the vector cache on the exact path
                assert vector is not None
                return own.search(namespace, key, vector, depth, as_of, current())
            return own_statistics(key) if m == "fulltext" and own is not None else store_list(m, key)

        async def own_statistics(key: Key) -> list[cand.Candidate]:
            """BM25 as Lucene would rank the namespace alone; the index's while the cache lacks a turn."""
            found = await own.keyword_search(namespace, key, words, depth, as_of, current())  # type: ignore[union-attr]
            return found if found is not None else await store_list("fulltext", key)

        def summary_job(m: Method) -> Awaitable[list[str]]:  # stage 1 keeps S sessions: a few more suffice
            if m == "fulltext" and own is not None:
                return own.summaries.search(namespace, words, min(depth, 3 * recipe.sessions), as_of)
            return cand.summary_sessions(self.store, m, namespace, vector=vector, lucene=lucene,
                                         depth=min(depth, 3 * recipe.sessions), exact=exact, as_of=as_of,
                                         alone=alone)

        async def whole_sessions() -> list[str]:
            found = await own.session_keyword_search(namespace, words, min(depth, 3 * recipe.sessions),  # type: ignore[union-attr]
                                                     as_of, current())
            return found or []  # None: the cache lacks a turn, so the list is left out

        jobs: dict[object, asyncio.Future] = {}
        # the late list's query vectors, on the late encoder's query thread while the lists are read
        late_query = asyncio.wrap_future(self.late.submit_query(query)) \
            if self.late is not None and recipe.late_weight else None
        # where the sessions' late list is read, it stands for BM25 over the whole text (`Recipe.session_text_weight`)
        session_late = late_query is not None and bool(recipe.session_late_weight) and exact

        def start(name: object, job: Awaitable) -> None:
            jobs[name] = asyncio.ensure_future(job)

        def keyword_jobs() -> None:
            for m, key in recipe.lists:
                if m == "fulltext":
                    start((m, key), turn_job(m, key))
            if recipe.two_stage and recipe.summary_text_weight:  # a summary list weighted 0 is not read
                start("summary:fulltext", summary_job("fulltext"))
            if recipe.two_stage and recipe.session_text_weight and own is not None and not session_late:  # cached only
                start("sessions:fulltext", whole_sessions())

        # The index path's BM25 lists run on the server while the query is embedded; on the exact path
        # both are this process's work (a small machine only stretches both): the query comes first.
        degraded: str | None = None
        with span("retrieval.lists", (("kg.retrieval.exact", exact),)) as traced:
            try:
                if not exact:
                    keyword_jobs()
                if needs_vector and vector is None:
                    embedded = await self.chain.embed([query])
                    [vector], degraded = embedded.vectors, embedded.degraded
                if degraded is None:
                    if exact:
                        keyword_jobs()
                    for m, key in recipe.lists:
                        if m == "vector":
                            start((m, key), turn_job(m, key))
                    if recipe.two_stage and recipe.summary_vector_weight:
                        start("summary:vector", summary_job("vector"))
                    if recipe.two_stage and window is not None:
                        start("window", cand.sessions_in_window(self.store, namespace, window,
                                                                recipe.boosts.time_slack_days))
                    traced.set("kg.retrieval.lists", len(jobs))
                    done = dict(zip(jobs, await asyncio.gather(*jobs.values())))
            finally:  # a failed list's siblings, or a degraded search's BM25 lists (and late query)
                gone = degraded is not None or sys.exc_info()[1] is not None
                await _cancel([*jobs.values(), *fresh, *([late_query] if gone and late_query else [])])
        if degraded is not None:
            assert vector is not None
            return await self._degraded(namespace, k, recipe, vector, lucene, size, total, as_of, degraded)
        lists: list[list[cand.Candidate]] = [done[(m, key)] for m, key in recipe.lists]
        pool = {c.id: c for ranked in lists for c in ranked}
        signals = await self._signals(namespace, pool, recipe)
        role = addressed_role(query)
        scores = fused(lists, pool, query, role, window, recipe, signals)
        late: list[str] = []
        if late_query is not None and self.late is not None:  # the fused lists' first turns, by late interaction
            with span("retrieval.late"):
                late = await late_list(self.store, self.vectors if exact else None, self.late, namespace,
                                       ranking(scores)[: recipe.late_top_n], late_query, recipe.late_budget)
            scores = fused(lists, pool, query, role, window, recipe, signals, late)
        names = named_speakers(query, pool.values())
        if not recipe.two_stage:
            cut = long_turns_cut(lists, role, recipe)
            scores = {t: v - cut.get(t, 0.0) for t, v in scores.items()}
            order = ranking(scores)
            hydrated: dict[str, Turn] = {}
            if recipe.reranker != "none":
                with span("retrieval.rerank", (("kg.reranker", recipe.reranker),)):
                    order, hydrated = await self._reranked(query, order, scores, recipe)
            rows: dict[str, list] = {}
            order = await restated_first(self.store, self.vectors if exact else None, namespace, order, scores, pool,
                                         recipe, window, rows)
            sessions = cand.first_seen(order, pool)
            return Retrieval([(t, scores[t]) for t in order[:k]], sessions, pool, names, window, vector, hydrated,
                             vector_rows=rows)

        in_window: set[str] = done["window"] if window is not None else set()
        session_of = {c.id: c.session_id for c in pool.values()}
        by_turns = ranking(group_scores(scores, session_of, recipe.session_turns))
        session_lists = [by_turns, *(done.get(n, []) for n in ("summary:vector", "summary:fulltext", "sessions:fulltext"))]
        session_weights = [1.0, recipe.summary_vector_weight, recipe.summary_text_weight, recipe.session_text_weight]
        if session_late and late_query is not None and self.late is not None:
            with span("retrieval.session_late"):  # stage 1's first sessions again, by late interaction
                head = ranking(rrf(session_lists, recipe.rrf_k, session_weights))[: recipe.session_late_top_n]
                session_lists.append(await session_late_list(self.vectors, self.late, namespace, head, late_query,
                                                             as_of, recipe, role))
            session_weights.append(recipe.session_late_weight)
        s_scores = rrf(session_lists, recipe.rrf_k, session_weights)
        for s in in_window:
            s_scores[s] = s_scores.get(s, 0.0) + recipe.boosts.time * (1.0 / (recipe.rrf_k + 1))
        ordered_sessions = ranking(s_scores)
        top_sessions = ordered_sessions[: recipe.sessions]
        if on_sessions is not None:
            on_sessions(ordered_sessions)

        hydrated = {}
        async def dense_again(probe: list[float]) -> list[list[cand.Candidate]]:
            """The dense lists read again with `probe` as the first round read them, but exactly inside the
            chosen sessions through a global index (Cypher 5, which may miss the tenant's turns)."""
            if not (exact or cand.filtered(self.store)):
                found, read = await self._exact_inside(lists, recipe, namespace, top_sessions, probe, depth, as_of)
                hydrated.update(read)
                return found
            again = iter(await asyncio.gather(*(
                own.search(namespace, key, probe, depth, as_of, current()) if exact and own is not None
                else cand.turn_list(self.store, m, key, namespace, vector=probe, lucene=lucene, depth=depth,
                                    exact=exact, as_of=as_of, fetch=fetch, alone=alone)
                for m, key in recipe.lists if m == "vector")))
            return [next(again) if m == "vector" else ranked for (m, _), ranked in zip(recipe.lists, lists)]

        rank_of = {s: r for r, s in enumerate(top_sessions, start=1)}
        rows = {}  # turn vector rows read (feedback, recency within a topic), each once
        probe: list[float] | None = vector
        redo = not exact and dense and bool(top_sessions) and not cand.filtered(self.store)
        while True:  # again when the lists are read again: through a global index, or with the moved query
            if redo and probe is not None:
                with span("retrieval.stage2", (("kg.retrieval.sessions", len(top_sessions)),
                                               ("kg.retrieval.feedback", probe is not vector))):
                    lists = await dense_again(probe)
                pool.update({c.id: c for ranked in lists for c in ranked})
                session_of = {c.id: c.session_id for c in pool.values()}
                signals.update(await self._signals(namespace, pool, recipe, known=signals))
                scores = fused(lists, pool, query, role, window, recipe, signals, late)
            cut = long_turns_cut(lists, role, recipe)
            final = {t: v - cut.get(t, 0.0) + recipe.session_prior / (recipe.rrf_k + rank_of[session_of[t]])
                     for t, v in scores.items() if session_of[t] in rank_of}
            order = best_per_group(final, session_of, top_sessions, recipe.turns_per_session)
            if probe is not vector or not (dense and recipe.feedback_turns and order):
                break
            assert vector is not None  # dense lists were read
            head = order[: recipe.feedback_turns]  # pseudo-relevance feedback (kg.queries.feedback)
            rows.update(await feedback.vector_rows(self.store, head, rows, self.vectors if exact else None, namespace))
            probe = feedback.moved(vector, [rows[t] for t in head if t in rows], recipe.feedback_weight)
            if probe is None:
                break
            redo = True
        if recipe.reranker != "none":
            with span("retrieval.rerank", (("kg.reranker", recipe.reranker),)):
                order, read = await self._reranked(query, order, final, recipe, hydrated)
            hydrated.update(read)
        order = (await restated_first(self.store, self.vectors if exact else None, namespace, order, final, pool,
                                      recipe, window, rows))[:k]
        ranked_sessions = [(s, s_scores[s]) for s in ordered_sessions]
        return Retrieval([(t, final[t]) for t in order], ranked_sessions, pool, names, window, vector, hydrated,
                         vector_rows=rows)

    async def _degraded(self, namespace: str, k: int, recipe: Recipe, vector: list[float], lucene: str, size: int,
                        total: int, as_of: datetime | None, reason: str) -> Retrieval:
        """The primary embedder is down: `vector` is the fallback's, comparable only with the fallback
        vectors, so the recipe's lists give way to those and BM25, fused; no summaries, no rerank."""
        depth = max(self.settings.index_candidates, k)
        fetch = cand.index_fetch(self.store, self.vector_search, depth, size, total)
        with span("retrieval.degraded"):
            lists = await asyncio.gather(
                cand.fallback_turn_list(self.store, namespace, vector=vector, depth=depth, fetch=fetch, as_of=as_of),
                cand.turn_list(self.store, "fulltext", "turn", namespace, vector=None, lucene=lucene, depth=depth,
                               exact=False, as_of=as_of, alone=0 < size == total))
        pool = {c.id: c for ranked in lists for c in ranked}
        scores = rrf([[c.id for c in ranked] for ranked in lists], recipe.rrf_k)
        order = ranking(scores)[:k]
        return Retrieval([(t, scores[t]) for t in order], cand.first_seen(order, pool), pool, vector=vector,
                         degraded=reason)

    async def _reranked(self, query: str, order: list[str], scores: dict[str, float], recipe: Recipe,
                        known: dict[str, Turn] | None = None) -> tuple[list[str], dict[str, Turn]]:
        """`order` with its first `rerank_top_n` reordered by the recipe's reranker (fused with their order:
        `rerank_keep`), each rank keeping the score it had (still descending), and the turns read for it."""
        if recipe.reranker not in self._rerankers:
            try:
                self._rerankers[recipe.reranker] = self._make_reranker(recipe.reranker)
            except Exception as exc:  # noqa: BLE001 - a reranker that cannot be built never fails a search
                log.warning("reranker %r not available, the fused order is kept: %s", recipe.reranker, exc)
                self._rerankers[recipe.reranker] = None
        reranker = self._rerankers[recipe.reranker]
        head = order[: recipe.rerank_top_n]
        if reranker is None or len(head) < 2:
            return order, {}
        known = known or {}
        turns = {t: known[t] for t in head if t in known}
        turns.update(await cand.hydrate_turns(self.store, [t for t in head if t not in turns]))
        head = [t for t in head if t in turns]  # a turn deleted meanwhile is left out
        new_head = await rerank(reranker, query, head, [passage(turns[t]) for t in head])
        if recipe.rerank_keep:  # the model's order is one more vote beside the fused order
            new_head = ranking(rrf([head, new_head], recipe.rrf_k, [recipe.rerank_keep, 1.0]))
        by_rank = [scores[t] for t in head]
        scores.update(zip(new_head, by_rank))
        return new_head + order[recipe.rerank_top_n:], turns

    async def _exact_inside(
        self, lists: list[list[cand.Candidate]], recipe: Recipe, namespace: str, sessions: list[str],
        vector: list[float] | None, depth: int, as_of: datetime | None,
    ) -> tuple[list[list[cand.Candidate]], dict[str, Turn]]:
        """Stage 2 on large namespaces: the dense lists again, exactly, inside the chosen sessions."""
        assert vector is not None
        keys = [key for m, key in recipe.lists if m == "vector"]
        redone, hydrated = await cand.turn_lists_in_sessions(self.store, keys, namespace, sessions, vector=vector,
                                                             depth=depth, as_of=as_of)
        it = iter(redone)
        return [next(it) if m == "vector" else ranked for (m, _), ranked in zip(recipe.lists, lists)], hydrated

    async def _signals(self, namespace: str, pool: dict[str, cand.Candidate], recipe: Recipe,
                       known: dict[str, float] | None = None) -> dict[str, float]:
        """The session signal of the pool's sessions not in `known`; nothing is read at weight 0."""
        if not recipe.session_signal_weight:
            return {}
        wanted = {c.session_id for c in pool.values()} - set(known or {})
        return await session_signals(self.store, namespace, wanted)


async def _cancel(jobs: Iterable[asyncio.Future]) -> None:
    """Cancel the lists still running (a failed or degraded search) and wait for them to end."""
    pending = [job for job in jobs if not job.done()]
    for job in pending:
        job.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
