"""Retrieval recipes: small frozen configs a caller picks instead of passing flags.

    flat          one dense list over the turns' own text (the classic baseline)
    bm25          one BM25 list over the turns' own text (the other baseline)
    hybrid        BM25 and dense over the turn's own key (a long turn by its best part), and the
                  same two over its context key (the turn first, then its neighbours: support, so
                  a turn is found by its own words whatever its neighbours say), fused by
                  reciprocal rank fusion, with the query's time window, named speakers and
                  question/answer adjacency as boosts
                  and, where token vectors are kept (`[embedding] late`), a late-interaction list
                  over the fused lists' first turns
    hierarchical  hybrid, then two stages: sessions ranked by their best turns, their whole text
                  and their summaries (stage 1), turns re-ranked inside the top `sessions` (stage 2),
                  top-K; and, within a token budget, a late-interaction list over stage 1's
                  first sessions, each session's token vectors as one document (where it is read,
                  it stands for the whole text's BM25 list)

Any recipe may add a rerank stage (`reranker`, see `kg.queries.rerank`): the first `rerank_top_n` turns
of its final list (after stage 2 for hierarchical, the fused list for the others) reordered by a
model reading the query with each turn, its order fused with the fused one (`rerank_keep`). None of
the named recipes reranks; the configured strategy gets `[memory.retrieval.rerank]`.

Recipes are never mutated; `recipe.model_copy(update=...)` makes a variant.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kg.core.settings.memory import SESSIONS_S, TURNS_PER_SESSION_T
from kg.core.vocabulary import RECIPE_ALIASES, RerankerKind

Method = Literal["vector", "fulltext"]
RESTATED = 0.8  # MiniLM cosine of a near restatement ("my 5K best is 27:10" / "a new 5K best: 25:40": 0.80); at 0.5 LoCoMo's chit-chat turns were reordered (turn R@10 0.79 -> 0.67)
Key = Literal["turn", "context"]
# the late list's weight in the named hybrid recipes: 1, 2, 3 each gained both development splits, 4 lost
# LoCoMo turn recall (docs/retrieval.md, "Late interaction")
LATE = 3.0
# the sessions' late list's weight in the hierarchical recipe: at 0.5 it raised all-evidence session
# recall@5 on both development splits (LoCoMo 0.834 -> 0.846, LongMemEval-S 0.930 -> 0.936 on 172
# questions); unbounded, scoring the ~50,000 tokens of 20 long sessions took the first search after a
# write from p95 68 to 339 ms, so it reads at most `session_late_budget` tokens, of the turns of the role
# the query addresses (docs/retrieval.md)
SESSION_LATE = 0.5


class Boosts(BaseModel):
    """Additions to a turn's fused score, in units of a first-rank RRF vote (1 / (rrf_k + 1))."""

    model_config = ConfigDict(frozen=True)

    speaker: float = Field(0.0, ge=0)  # the turn's speaker is named in the query
    # the turn's role is the one the query asks for (`kg.queries.analysis.addressed_role`): the user's
    # turns for a first-person question, the assistant's for "what did you recommend?"
    role: float = Field(0.0, ge=0)
    time: float = Field(0.0, ge=0)  # the turn falls in the query's time window
    time_slack_days: float = Field(3.0, ge=0)  # how far around the window still counts
    answer: float = Field(0.0, ge=0)  # share of a question turn's score passed to a short reply to it
    # recency within a topic: among the first `rerank_top_n` turns, a user's turn of a later session whose
    # own vector is at least this close (cosine) to an earlier one's of the same speaker ranks above it
    # (an update, a restated value); 0: off
    restated: float = Field(0.0, ge=0, le=1)


class Recipe(BaseModel):
    """A retrieval recipe: the ranked lists fused, their boosts, the two stages and the rerank stage."""

    model_config = ConfigDict(frozen=True)

    name: str
    # the ranked lists fused: (method, key); a turn without a context key yet stands in with its own
    lists: tuple[tuple[Method, Key], ...] = (("fulltext", "turn"), ("vector", "turn"), ("fulltext", "context"),
                                             ("vector", "context"))
    # each list's weight in the fusion, in the order of `lists` (empty: 1 each)
    weights: tuple[float, ...] = ()
    rrf_k: int = Field(20, ge=1)
    content_words: bool = False  # BM25 queries without question and function words
    boosts: Boosts = Boosts()
    two_stage: bool = False
    sessions: int = Field(SESSIONS_S, ge=1)  # S: stage-1 sessions passed to stage 2
    turns_per_session: int = Field(TURNS_PER_SESSION_T, ge=1)  # T: turns stage 2 keeps per session
    session_turns: int = Field(3, ge=1)  # a session's best turns that make its stage-1 score
    # stage 1: weights of the summaries' dense and BM25 lists (a list weighted 0 is not read). On
    # LoCoMo with the offline summaries, adding the dense list at 0.1 moved session R@5 by -0.003
    # and R@1 by -0.013, for an index search per query; an abstractive summarizer may earn it back.
    summary_vector_weight: float = Field(0.0, ge=0)
    summary_text_weight: float = Field(0.1, ge=0)
    # stage 1: weight of BM25 over each session's whole text (its turns' own keys as one document),
    # which finds a session by words its best turns lack; scored from the in-memory cache, so a
    # namespace too large for it (`keyword_max_turns`) goes without. Where the sessions' late list is
    # read (`session_late_weight`, a late encoder, a cached namespace) it reads each session whole
    # already and this list is not: beside it, the words list lowered both development splits'
    # session recall@5 (all evidence: LoCoMo 0.8513 -> 0.8447, LongMemEval-S 0.9384 -> 0.9289 after
    # closing; docs/retrieval.md)
    session_text_weight: float = Field(0.5, ge=0)
    session_prior: float = Field(1.0, ge=0)  # weight of the session's stage-1 rank in stage 2
    # stage 2, pseudo-relevance feedback (`kg.queries.feedback`): the dense lists read again with the
    # query's vector plus `feedback_weight` times the mean of its first `feedback_turns` turns' own
    # vectors, and fused again; 0: one round
    feedback_turns: int = Field(0, ge=0)
    feedback_weight: float = Field(0.5, ge=0)
    reranker: RerankerKind = "none"
    rerank_top_n: int = Field(20, ge=2)  # turns of the final (or fused) list the reranker reorders
    # the fused order's weight beside the reranker's (1) in an RRF of the two over those turns: the model's
    # order is one more vote, not the whole answer (the cross-encoder alone lost LoCoMo turn R@10, 0.799 ->
    # 0.787; beside the fused order at 1 it gained both benchmarks, docs/rerank.md); 0: its order alone
    rerank_keep: float = Field(1.0, ge=0)
    # first-rank RRF votes a turn gains (or loses) from its session's quality and outcome
    # (`kg.queries.session_signals`); 0: not read, the ranking is the one without it
    session_signal_weight: float = Field(0.0, ge=0)
    # a long turn's votes from its context key (the turn with its ±2 neighbours, made when its session
    # closed): a turn of more than `long_turn_chars` (an assistant's answer, most often) has words enough
    # of its own, and a key that repeats its neighbours' lets it outrank the turn the question is about;
    # those votes count `long_turn_context_weight` of their weight, unless the question asks for the
    # assistant's words (`addressed_role`). A turn with no context key yet (its own key stands in) keeps
    # them whole. On LongMemEval-S 0.5 moved turn R@10 after closing 0.9004 -> 0.9099 (temporal-reasoning
    # 0.824 -> 0.874); LoCoMo, whose turns are short, does not move (docs/retrieval.md); 1: no cut
    long_turn_chars: int = Field(500, ge=1)
    long_turn_context_weight: float = Field(0.5, ge=0, le=1)
    # the late list (`kg.core.embedders.late`, `[embedding] late`): the first `late_top_n` turns of the
    # fused lists ranked again by late interaction (each query token's best match among the turn's
    # token vectors, summed), fused with the other lists at `late_weight`; 0, or no encoder installed:
    # not read, the ranking is the one without it. A turn without token vectors is not on the list.
    late_weight: float = Field(0.0, ge=0)
    late_top_n: int = Field(50, ge=2)
    # ... of which those whose tokens fit this many together, in the fused order (the first always; 0:
    # all), as the sessions' list is bounded, so a head of long answers costs what a bounded one does:
    # LoCoMo's 50 longest turns hold under 4,000 tokens (it never binds there); on LongMemEval-S's whole
    # split the late tokens a search scores went max 41,086 -> 32,489 with no question moved, where
    # 8,192 cut them to 24,322 and cost one question its evidence turn (docs/benchmarks.md, session 33)
    late_budget: int = Field(16384, ge=0)
    # the sessions' late list (two stages, cached namespaces): the first `session_late_top_n` sessions of
    # stage 1 ranked again by late interaction over each session's token vectors as one document (each
    # query token's best match anywhere in the session: a session that answers every part of a question
    # in different turns), fused with the session lists at this weight; read only with `late_weight`
    session_late_weight: float = Field(0.0, ge=0)
    session_late_top_n: int = Field(20, ge=2)
    # ... of which those that fit this many tokens together, in stage 1's order (the first always; 0:
    # all): the list's cost is bounded whatever the sessions' length
    session_late_budget: int = Field(16384, ge=0)
    # ... each session's turns of the role the query addresses (`addressed_role`: the user's for a first-person
    # question) only, when it addresses one: long assistant answers no longer fill the budget (LongMemEval-S,
    # stratified 72 after closing, session R@5 all 0.9444 -> 0.9583, warm p50 52 -> 44 ms; LoCoMo's
    # third-person questions address no role: unchanged); False: all its turns
    session_late_by_role: bool = True


    @model_validator(mode="after")
    def _one_weight_per_list(self) -> "Recipe":
        if self.weights and (len(self.weights) != len(self.lists) or min(self.weights) < 0):
            raise ValueError(f"weights: one weight >= 0 per list ({len(self.lists)}), got {self.weights}")
        return self

    def list_weights(self) -> list[float]:
        return list(self.weights) if self.weights else [1.0] * len(self.lists)


_BOOSTS = Boosts(speaker=0.7, role=2.0, time=2.0, answer=0.5, restated=RESTATED)
FLAT = Recipe(name="flat", lists=(("vector", "turn"),))
BM25 = Recipe(name="bm25", lists=(("fulltext", "turn"),))
HYBRID = Recipe(name="hybrid", boosts=_BOOSTS, content_words=True, late_weight=LATE)
HIERARCHICAL = Recipe(name="hierarchical", boosts=_BOOSTS, content_words=True, two_stage=True, feedback_turns=5,
                      late_weight=LATE, session_late_weight=SESSION_LATE)
RECIPES: dict[str, Recipe] = {r.name: r for r in (FLAT, BM25, HYBRID, HIERARCHICAL)}
# The names of the old per-door search methods, kept so `strategy=vector` still means the same ranking.
ALIASES = RECIPE_ALIASES


def recipe(name_or_recipe: str | Recipe, sessions: int | None = None, turns_per_session: int | None = None,
           reranker: RerankerKind | None = None, rerank_top_n: int | None = None,
           session_signal_weight: float | None = None, rerank_keep: float | None = None) -> Recipe:
    """A recipe by name (or as given), with S, T, the rerank stage and the session signal's weight
    overridden when set (a copy, never in place)."""
    if isinstance(name_or_recipe, Recipe):
        chosen = name_or_recipe
    else:
        try:
            chosen = RECIPES[ALIASES.get(name_or_recipe, name_or_recipe)]
        except KeyError:
            raise ValueError(f"unknown retrieval recipe {name_or_recipe!r}; use one of {sorted(RECIPES)} "
                             f"(or {', '.join(f'{a} for {r}' for a, r in ALIASES.items())})") from None
    given = (("sessions", sessions), ("turns_per_session", turns_per_session), ("reranker", reranker),
             ("rerank_top_n", rerank_top_n), ("session_signal_weight", session_signal_weight),
             ("rerank_keep", rerank_keep))
    update = {k: v for k, v in given if v is not None}
    return chosen.model_copy(update=update) if update else chosen
