"""HTTP routes for searching a namespace: turns (by strategy or retrieval recipe), sessions and
memories, and recall."""

from __future__ import annotations

from typing import Annotated

from fastapi import FastAPI, Query, Response

from kg.core.models.limits import MAX_CHARS
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit
from kg.core.models.requests import Instant
from kg.core.vocabulary import K_DOC, K_MAX, K_MIN, RecipeChoice
from kg.http.common import Existing, Mem, namespace_router

router = namespace_router()

Q = Query(min_length=1, max_length=MAX_CHARS["query"], description="What to look for.")
STRATEGY = Query(None, description="The retrieval recipe; default `[memory.retrieval] strategy` (hierarchical). flat: "
                 "dense only, bm25: words only; vector and fulltext are their old names. Each hit names its `recipe`.")
AsOf = Annotated[Instant | None, Query(description="Hide turns after this moment (ISO 8601; without an offset: UTC).")]
Now = Annotated[Instant | None, Query(description="When the question is asked: 'last month' or 'two weeks ago' count "
                                        "back from it (ISO 8601; default: as_of, else the present).")]
DEGRADED_HEADER = "X-KG-Degraded"  # why a search ran on the fallback embedder (docs/retrieval.md)


@router.get("/search", response_model=list[RankedTurn], tags=["search"])
async def search(
    namespace: Existing, memory: Mem, response: Response,
    q: str = Q,
    k: int = Query(10, ge=K_MIN, le=K_MAX, description=K_DOC),
    strategy: RecipeChoice | None = STRATEGY, as_of: AsOf = None, now: Now = None,
) -> list[RankedTurn]:
    """Turns of the namespace that best answer `q`, by the configured recipe unless `strategy` names one.
    While the primary embedder is down, each hit is `degraded` and the `X-KG-Degraded` header says why."""
    hits = await memory.search_turns(namespace, q, k, strategy, as_of, now)
    degraded = next((h.degraded_reason for h in hits if h.degraded_reason), None)
    if degraded:
        response.headers[DEGRADED_HEADER] = degraded
    return hits


@router.get("/search/sessions", response_model=list[SessionHit], tags=["search"])
async def search_sessions(namespace: Existing, memory: Mem, q: str = Q,
                          k: int = Query(5, ge=K_MIN, le=K_MAX, description=K_DOC),
                          strategy: RecipeChoice | None = STRATEGY, as_of: AsOf = None,
                          now: Now = None) -> list[SessionHit]:
    """Sessions about `q` ("what did we discuss about X?"), each with its summary and best turns."""
    return await memory.search_sessions(namespace, q, k, strategy, as_of, now)


@router.get("/search/memories", response_model=list[MemoryHit], tags=["search"])
async def search_memories(namespace: Existing, memory: Mem, q: str = Q,
                          k: int = Query(10, ge=K_MIN, le=K_MAX, description=K_DOC), as_of: AsOf = None,
                          now: Now = None) -> list[MemoryHit]:
    """Facts and turns about `q` ("what did we decide about X?"), one score each."""
    return await memory.search_memories(namespace, q, k, as_of, now)


@router.get("/recall", response_model=list[MemoryHit], tags=["search"])
async def recall(namespace: Existing, memory: Mem, q: str = Q,
                 k: int = Query(10, ge=K_MIN, le=K_MAX, description=K_DOC), as_of: AsOf = None,
                 now: Now = None) -> list[MemoryHit]:
    """Turns, facts and summaries ranked by one score (similarity + graph relevance + confidence);
    superseded facts excluded; `as_of` asks about that moment, `now` is when the question is asked."""
    return await memory.recall(namespace, q, k, as_of, now)


def register(app: FastAPI) -> None:
    app.include_router(router)
