"""How a session is cut so that no summarizer call sees more than the token budget (pure).

A session that fits `token_budget` tokens is summarized in one call. A longer one is cut on turn
boundaries into windows of at most that many tokens (and `window_turns` turns, if set); the
window summaries are rolled up in groups of at most `rollup_fanout` summaries and
`token_budget` tokens into meta summaries, level by level, until one call can summarize the rest.
Earlier windows never change as a session grows (only the last one does), so their summaries
are reused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kg.core.prompts.extraction import ChunkTurn
from kg.core.prompts.summaries import Part

from ..extraction.chunking import CHARS_PER_TOKEN, estimate_tokens, turn_tokens

PART_OVERHEAD_TOKENS = 16
T = TypeVar("T")
_TRUNCATED = " … [truncated for summarization]"


def fit_turn(turn: ChunkTurn, budget: int) -> ChunkTurn:
    """A turn longer than the whole budget is cut (it stays whole in the graph)."""
    if turn_tokens(turn) <= budget:
        return turn
    keep = max(0, (budget - turn_tokens(turn.model_copy(update={"text": ""}))) * CHARS_PER_TOKEN - len(_TRUNCATED))
    return turn.model_copy(update={"text": turn.text[:keep] + _TRUNCATED})


def _pack(items: Sequence[T], cost: Callable[[T], int], max_items: int, budget: int) -> list[list[T]]:
    """Consecutive groups of at most `max_items` items and `budget` tokens, in order (an item over
    the budget alone is a group of one)."""
    groups: list[list[T]] = []
    current: list[T] = []
    used = 0
    for item in items:
        size = cost(item)
        if current and (len(current) >= max_items or used + size > budget):
            groups.append(current)
            current, used = [], 0
        current.append(item)
        used += size
    if current:
        groups.append(current)
    return groups


def windows(turns: Sequence[ChunkTurn], window_turns: int | None, budget: int) -> list[list[ChunkTurn]]:
    """Consecutive runs of at most `budget` tokens (and `window_turns` turns, when set), each
    turn fitted: their number follows the session's size in tokens."""
    return _pack([fit_turn(t, budget) for t in turns], turn_tokens, window_turns or len(turns) or 1, budget)


def part_tokens(part: Part) -> int:
    return PART_OVERHEAD_TOKENS + estimate_tokens(part.text)


def fits_one_call(parts: Sequence[Part], fanout: int, budget: int) -> bool:
    return len(parts) <= fanout and sum(part_tokens(p) for p in parts) <= budget


def rollup_groups(parts: Sequence[Part], fanout: int, budget: int) -> list[list[Part]]:
    """Consecutive groups of at most `fanout` parts and `budget` tokens (a part over the budget
    alone is a group of one: summaries are short, so this only happens with tiny budgets)."""
    return _pack(parts, part_tokens, fanout, budget)


def window_slot(start: int) -> str:
    return f"window:{start}"


def meta_slot(level: int, start: int) -> str:
    return f"meta:{level}:{start}"


SESSION_SLOT = "session"
