"""Routing a session to extraction requests by size; `merging` then counts an item seen in
several chunks once.

A session whose turns fit `memory.indexing.chunk_token_budget` is one request. A longer one is
split on turn boundaries into chunks of at most that budget, each repeating the last
`chunk_overlap` share of the previous chunk so that a statement and its context straddling a
boundary is seen whole at least once.

Token counts are estimated offline (about four characters per token, plus the per-turn wrapper
the prompt adds); the budget bounds the turns only, not the fixed prompt and schema.
"""

from __future__ import annotations

from collections.abc import Iterable

from kg.core.prompts.extraction import ChunkInput, ChunkTurn
from kg.core.settings.memory import IndexingSettings

CHARS_PER_TOKEN = 4
TURN_OVERHEAD_TOKENS = 24  # the <turn id role speaker ts> wrapper around each turn's text
_TRUNCATED = " … [truncated for extraction]"


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def turn_tokens(turn: ChunkTurn) -> int:
    return TURN_OVERHEAD_TOKENS + estimate_tokens(turn.text) + estimate_tokens(turn.speaker or "")


def _fit(turn: ChunkTurn, budget: int) -> ChunkTurn:
    """A turn longer than the whole budget is cut (it is still stored whole elsewhere)."""
    if turn_tokens(turn) <= budget:
        return turn
    keep = max(0, (budget - TURN_OVERHEAD_TOKENS - estimate_tokens(turn.speaker or "")) * CHARS_PER_TOKEN)
    keep = max(0, keep - len(_TRUNCATED))
    return turn.model_copy(update={"text": turn.text[:keep] + _TRUNCATED})


def plan_chunks(
    session_id: str,
    turns: Iterable[ChunkTurn | tuple],
    *,
    token_budget: int,
    overlap: float,
    namespace: str = "default",
) -> list[ChunkInput]:
    """The extraction requests for one session, in turn order."""
    ordered = sorted((t if isinstance(t, ChunkTurn) else ChunkTurn.model_validate(t) for t in turns), key=lambda t: t.idx)
    if not ordered:
        return []
    ordered = [_fit(t, token_budget) for t in ordered]
    sizes = [turn_tokens(t) for t in ordered]
    bounds = _bounds(sizes, token_budget, int(token_budget * overlap))
    return [
        ChunkInput(
            session_id=session_id,
            namespace=namespace,
            turns=ordered[start:end],
            chunk_index=i,
            chunk_count=len(bounds),
        )
        for i, (start, end) in enumerate(bounds)
    ]


def chunks_for(
    settings: IndexingSettings, session_id: str, turns: Iterable[ChunkTurn | tuple], namespace: str = "default"
) -> list[ChunkInput]:
    return plan_chunks(
        session_id,
        turns,
        token_budget=settings.chunk_token_budget,
        overlap=settings.chunk_overlap,
        namespace=namespace,
    )


def _bounds(sizes: list[int], budget: int, overlap_tokens: int) -> list[tuple[int, int]]:
    n = len(sizes)
    if sum(sizes) <= budget:
        return [(0, n)]
    bounds: list[tuple[int, int]] = []
    start = 0
    while True:
        end, used = start, 0
        while end < n and (end == start or used + sizes[end] <= budget):
            used += sizes[end]
            end += 1
        bounds.append((start, end))
        if end >= n:
            return bounds
        nxt, carried = end, 0
        while nxt - 1 > start and carried + sizes[nxt - 1] <= overlap_tokens:
            nxt -= 1
            carried += sizes[nxt]
        while nxt < end and carried + sizes[end] > budget:  # the next chunk must reach a new turn
            carried -= sizes[nxt]
            nxt += 1
        start = nxt
