"""A search's scores from its ranked lists: RRF fusion with the recipe's boosts, and what a long
turn's context key takes back (`Recipe.long_turn_context_weight`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta

from kg.core.models.turns import Role

from .analysis import TimeWindow, named_speakers
from .candidates import Candidate
from .fusion import rrf
from .recipes import Recipe


def fused(lists: list[list[Candidate]], pool: dict[str, Candidate], query: str, role: Role | None,
          window: TimeWindow | None, recipe: Recipe, signals: dict[str, float],
          late: Sequence[str] = ()) -> dict[str, float]:
    """The recipe's lists fused by RRF (with the late list's turn ids, `late`, at `late_weight`),
    plus its boosts (`Boosts`) and the session signal; `role` is the query's `addressed_role`,
    read once per search."""
    ranked_ids = [[c.id for c in ranked] for ranked in lists]
    weights = recipe.list_weights()
    if late and recipe.late_weight:
        ranked_ids, weights = [*ranked_ids, list(late)], [*weights, recipe.late_weight]
    base = rrf(ranked_ids, recipe.rrf_k, weights)
    # what a question passes to a short reply (`Boosts.answer`): its votes from the recipe's lists, not the
    # late list's, which has read the reply's own tokens already (passed on too, the question's words
    # counted twice: a reply to another question by the speaker named outranked that speaker's answer)
    passed = rrf(ranked_ids[: len(lists)], recipe.rrf_k, weights[: len(lists)]) if len(ranked_ids) > len(lists) \
        else base
    b = recipe.boosts
    unit = 1.0 / (recipe.rrf_k + 1)
    names = named_speakers(query, pool.values()) if b.speaker else set()
    role = role if b.role else None
    slack = timedelta(days=b.time_slack_days)
    scores = dict(base)
    at = {(pool[tid].session_id, pool[tid].idx): tid for tid in base}
    for tid in base:
        c = pool[tid]
        if names and c.speaker in names:
            scores[tid] += b.speaker * unit
        if role is not None and c.role == role:
            scores[tid] += b.role * unit
        if window is not None and b.time and window.near(c.ts, slack):
            scores[tid] += b.time * unit
        if b.answer and c.follows_question:
            scores[tid] += b.answer * passed.get(at.get((c.session_id, c.idx - 1), ""), 0.0)
        if signals:
            scores[tid] += recipe.session_signal_weight * unit * signals.get(c.session_id, 0.0)
    return scores


def long_turns_cut(lists: list[list[Candidate]], role: Role | None, recipe: Recipe) -> dict[str, float]:
    """What a turn's score loses as a long turn whose context key counts less
    (`Recipe.long_turn_context_weight`), unless the query addresses the assistant (`role`, its
    `addressed_role`): taken from the turns' final scores, not from the scores that rank their
    sessions (a session of long answers is no less the one the question is about)."""
    share = 1.0 - recipe.long_turn_context_weight
    if not share or role == "assistant":  # the assistant's words asked for: kept whole
        return {}
    cut: dict[str, float] = defaultdict(float)
    for (_, key), ranked, w in zip(recipe.lists, lists, recipe.list_weights()):
        if key == "context" and w:
            for rank, c in enumerate(ranked, start=1):
                if c.keyed and c.chars > recipe.long_turn_chars:
                    cut[c.id] += share * w / (recipe.rrf_k + rank)
    return cut
