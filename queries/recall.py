"""Session arcs, memories and recall: retrieval results with one score each.

    score = w_similarity * similarity + w_graph * graph + w_confidence * confidence

- similarity: 0..1; turns: their fused score scaled by the best turn's, which is that turn's cosine
  to the query (`best_cosine`); summaries by their session's stage-1 score; facts by the cosine of
  "subject predicate object" to the query);
- graph: closeness to the entities the query names: 1 for a fact about one of them or a turn they
  said, 0.5 for a fact evidenced by a retrieved turn or a summary naming one, else 0;
- confidence: a fact's confidence at `as_of` (`kg.queries.confidence`); turns and summaries: 1.
Superseded, retracted and expired facts never appear. Weights: `[memory.retrieval.recall]`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from datetime import datetime, timezone
from typing import Any

from kg.core.embedders.base import embed_async
from kg.core.models.facts import FactView, entity_key
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit
from kg.core.models.turns import as_utc
from kg.core.models.values import native_props
from kg.core.settings.memory import ConfidenceSettings, RecallWeights
from kg.core.store.store import Store

from . import candidates as cand
from .confidence import score as confidence_score
from .feedback import vector_rows
from .fusion import normalized
from .recipes import Recipe
from .retrieve import Retrieval, Retriever
from .vectors import unit_rows

FACT_LIMIT = 50
_WORDS = re.compile(r"[\w'’-]+")


async def ranked_turns(store: Store, found: Retrieval, recipe: Recipe) -> list[RankedTurn]:
    turns = dict(found.hydrated)
    turns.update(await cand.hydrate_turns(store, [t for t, _ in found.turns if t not in turns]))
    return [RankedTurn(turn=turns[t], score=s, recipe=recipe.name, degraded=found.degraded is not None,
                       degraded_reason=found.degraded) for t, s in found.turns if t in turns]


async def search_sessions(retriever: Retriever, namespace: str, query: str, k: int, recipe: Recipe,
                          as_of: datetime | None = None, now: datetime | None = None) -> list[SessionHit]:
    """Sessions (arcs) by stage-1 score, each with its current summary and up to 3 best turns."""
    found = await retriever.search(namespace, query, max(k * 3, 10), recipe, as_of, now=now)
    top = found.sessions[:k]
    sessions = await cand.hydrate_sessions(retriever.store, namespace, [s for s, _ in top])
    turns = await ranked_turns(retriever.store, found, recipe)
    hits = []
    for sid, score in top:
        if sid not in sessions:
            continue
        session, summary = sessions[sid]
        best = [t for t in turns if t.turn.session_id == sid][:3]
        hits.append(SessionHit(session=session, summary=summary, score=score, turns=best))
    return hits


def query_keys(query: str) -> list[str]:
    """Every run of one to three words of the query as an entity key (matched exactly in Cypher)."""
    words = _WORDS.findall(query)
    keys = {entity_key(" ".join(words[i:i + n])) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
    return sorted(k.strip("'’") for k in keys if len(k) > 1)


async def recall(
    retriever: Retriever, confidence: ConfidenceSettings, weights: RecallWeights, namespace: str, query: str,
    k: int, recipe: Recipe, as_of: datetime | None = None, kinds: frozenset[str] = frozenset({"turn", "fact", "summary"}),
    now: datetime | None = None,
) -> list[MemoryHit]:
    """`as_of` hides later turns and asks which facts held then; `now` (when the question is asked)
    stands in for it for the facts, and is what relative time expressions count back from."""
    when = as_of if as_of is not None else now
    at = as_utc(when) if when is not None else datetime.now(timezone.utc)
    shown = max(1, k // 3)  # summaries: of the top sessions
    early: list[asyncio.Task] = []

    def hydrate_early(sessions: list[str]) -> None:  # while stage 2 runs
        early.append(asyncio.create_task(cand.hydrate_sessions(retriever.store, namespace, sessions[:shown])))

    try:
        found = await retriever.search(namespace, query, max(k, 10), recipe, as_of, now=now,
                                       on_sessions=hydrate_early if "summary" in kinds else None)
    except BaseException:
        for task in early:
            task.cancel()
        raise

    async def nothing() -> list[MemoryHit]:
        return []

    async def no_turns() -> list[RankedTurn]:
        return []

    turns, summaries, facts = await asyncio.gather(
        ranked_turns(retriever.store, found, recipe) if "turn" in kinds else no_turns(),
        _summaries(retriever, weights, namespace, found, shown, early[0] if early else None)
        if "summary" in kinds else nothing(),
        _facts(retriever, confidence, weights, namespace, query, found, [t for t, _ in found.turns], at)
        if "fact" in kinds else nothing(),
    )
    hits: list[MemoryHit] = [*summaries, *facts]
    best = await best_cosine(retriever.store, [t.turn.id for t in turns], None if found.degraded else found.vector,
                             found.vector_rows)
    sim = {tid: s * best for tid, s in normalized({t.turn.id: t.score for t in turns}).items()}
    for t in turns:
        graph = 1.0 if t.turn.speaker in found.named else 0.0
        hits.append(_hit(weights, "turn", t.turn.id, t.turn.text, sim[t.turn.id], graph, 1.0,
                         session_id=t.turn.session_id, ts=t.turn.ts, turn=t.turn))
    hits.sort(key=lambda h: -h.score)
    return hits[:k]


async def best_cosine(store: Store, ids: list[str], vector: list[float] | None,
                      known: dict[str, list] | None = None) -> float:
    """The cosine of the question to the turn among `ids` that matches it best (a long turn by its
    best part), on the facts' scale: the turns' similarities are their fused scores scaled to it,
    so when no turn really matches, a fact that does ranks first. 1.0 without a query vector.
    `known`: rows of `retrieval/turn_vectors` the search already read (not read again)."""
    if vector is None or not ids:
        return 1.0
    rows = list((await vector_rows(store, ids, known)).values())
    dim = len(vector)
    parts = [p for _, _, emb, more in rows if emb and len(emb) == dim
             for p in [emb, *(more[i:i + dim] for i in range(0, len(more or []), dim))]]
    if not parts:
        return 1.0
    return max(0.0, float((unit_rows(parts) @ unit_rows([vector])[0]).max()))


def _hit(weights: RecallWeights, kind: str, id: str, text: str, similarity: float, graph: float,
         confidence: float, **extra: Any) -> MemoryHit:
    score = weights.similarity * similarity + weights.graph * graph + weights.confidence * confidence
    return MemoryHit(kind=kind, id=id, text=text, score=score, similarity=similarity, graph=graph,
                     confidence=confidence, **extra)


async def _summaries(retriever: Retriever, weights: RecallWeights, namespace: str, found: Retrieval,
                     shown: int, hydrating: Awaitable[dict[str, Any]] | None) -> list[MemoryHit]:
    top = found.sessions[:shown]
    sessions = await (hydrating or cand.hydrate_sessions(retriever.store, namespace, [s for s, _ in top]))
    sim = normalized(dict(top))
    hits = []
    for sid, _ in top:
        summary = sessions.get(sid, (None, None))[1]
        if summary is None:
            continue
        graph = 0.5 if found.named & set(summary.entities) else 0.0
        hits.append(_hit(weights, "summary", summary.id, summary.text, sim[sid], graph, 1.0,
                         session_id=sid, ts=summary.ended_at, summary=summary))
    return hits


async def _facts(retriever: Retriever, cfg: ConfidenceSettings, weights: RecallWeights, namespace: str, query: str,
                 found: Retrieval, turn_ids: list[str], at: datetime) -> list[MemoryHit]:
    rows = await retriever.store.read("facts/recall", namespace=namespace, keys=query_keys(query),
                                      turn_ids=turn_ids, as_of=at, limit=FACT_LIMIT)
    if not rows:
        return []
    views = [_fact_view(r, at, cfg) for r in rows]
    sentences = [f"{v.subject} {v.predicate.replace('_', ' ')} {v.object_value}" for v in views]
    vector = found.vector if found.vector is not None else await retriever.embed(query)
    # a degraded search's query vector is the fallback's: the facts are embedded by the same model
    embedder = retriever.chain.fallback if found.degraded and retriever.chain.fallback else retriever.embedder
    vectors = await embed_async(embedder, sentences)
    hits = []
    for row, view, text, v in zip(rows, views, sentences, vectors):
        cosine = max(0.0, sum(a * b for a, b in zip(v, vector)))
        graph = 1.0 if row["named"] else 0.5
        hits.append(_hit(weights, "fact", view.id, text, cosine, graph, view.confidence, ts=view.valid_from, fact=view))
    return hits


def _fact_view(row: dict[str, Any], at: datetime, cfg: ConfidenceSettings) -> FactView:
    fact = native_props(row["fact"])
    conf = confidence_score(
        source=fact["source"], reinforcement_count=fact.get("reinforcement_count") or 0,
        recorded_at=fact["recorded_at"], last_reinforced_at=fact.get("last_reinforced_at"),
        last_accessed_at=fact.get("last_accessed_at"), ended=False, at=at, cfg=cfg,
    )
    return FactView.model_validate({**fact, "subject": row["subject"], "object_entity_id": row["object_entity_id"],
                                    "superseded_by": None, "status": "current", "confidence": conf})
