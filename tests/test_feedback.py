"""Pseudo-relevance feedback in stage 2 (`Recipe.feedback_turns`, `kg.queries.feedback`): the dense
lists are read again with the query's vector moved toward its first turns' own vectors, so a turn
that shares the answer's meaning but none of the question's words ranks higher; stage 1's sessions
do not move."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kg import AsyncMemory
from kg.core.settings.memory import VectorSearchSettings
from kg.queries.feedback import moved
from kg.queries.recipes import HIERARCHICAL
from kg.queries.retrieve import Retriever

START = datetime(2025, 3, 3, 9, tzinfo=timezone.utc)
QUESTION = "Where did we go for our honeymoon?"
SAID = ["For our honeymoon we went to Kyoto, it was perfect.", "The honeymoon was two weeks in Japan, mostly Kyoto.",
        "I still dream about our honeymoon trip to Japan.", "Where should we go for our anniversary dinner?",
        "Did we go to the dentist last month?", "We should go to the beach this weekend.",
        "My sister's wedding was in June.", "Where did I put the spare keys?", "We went to the cinema on Friday.",
        "Our wedding photos finally arrived.", "Where do you want to go for Christmas?",
        "I'd like to go hiking in the Alps next summer.", "We went to a great Italian restaurant downtown."]
EVIDENCE = "Kyoto's temples and gardens were the highlight of the whole trip."  # none of the question's words
WITHOUT = HIERARCHICAL.model_copy(update={"feedback_turns": 0})


def test_the_query_moves_toward_the_unit_mean_of_its_first_turns() -> None:
    q, a, b = [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 5.0]  # lengths do not weigh: each is made unit
    got = np.asarray(moved(q, [["a", "user", a, None], ["b", "user", b, None]], 0.5))
    centre = np.array([0.0, 1.0, 1.0]) / np.sqrt(2)
    want = np.array(q) + 0.5 * centre
    assert got == pytest.approx(want / np.linalg.norm(want), abs=1e-6)
    assert moved(q, [["a", "user", None, None]], 0.5) is None  # no vector: one round only
    assert moved(q, [["a", "user", a, None]], 0.0) is None


async def _rank(memory: AsyncMemory, namespace: str, recipe=HIERARCHICAL) -> int:
    hits = await memory.retrieve(namespace, QUESTION, k=40, recipe=recipe)
    return [h.turn.text for h in hits].index(EVIDENCE)


async def _honeymoon(memory: AsyncMemory, namespace: str) -> str:
    """The evidence's turn id."""
    await memory.add_turns(namespace, "s-1", [
        {"role": "user", "text": t, "ts": START + timedelta(minutes=i)} for i, t in enumerate([*SAID, EVIDENCE])])
    await memory.add_turns(namespace, "s-2", [
        {"role": "user", "text": t, "ts": START + timedelta(days=1, minutes=i)} for i, t in enumerate(SAID[3:])])
    return (await memory.turns(namespace, "s-1"))[-1].id


DENSE = {"lists": (("vector", "turn"),), "late_weight": 0.0}  # the dense list alone, where the move is the whole change


async def test_a_turn_like_the_first_ones_rises_and_the_sessions_stay(memory: AsyncMemory, namespace: str) -> None:
    await _honeymoon(memory, namespace)
    before = await _rank(memory, namespace, WITHOUT.model_copy(update=DENSE))
    after = await _rank(memory, namespace, HIERARCHICAL.model_copy(update=DENSE))
    assert after < before  # 13th, then 11th
    # the four lists (the late list apart: its own query vectors are not moved): 19th, then 17th
    four = {"late_weight": 0.0}
    assert await _rank(memory, namespace, HIERARCHICAL.model_copy(update=four)) < \
        await _rank(memory, namespace, WITHOUT.model_copy(update=four))
    sessions = [[s.session.id for s in await memory.search_sessions(namespace, QUESTION, k=2, recipe=r)]
                for r in (WITHOUT, HIERARCHICAL)]
    assert sessions[0] == sessions[1]


@pytest.mark.parametrize("exact_max_turns", [3000, 0])  # exact scans, then the indexes
async def test_the_lists_are_read_again_on_either_path(memory: AsyncMemory, namespace: str,
                                                      exact_max_turns: int) -> None:
    """Through the indexes the second round reads its dense lists as the first did: the index again
    where it filters by tenant, else exactly inside the chosen sessions (5.26)."""
    evidence = await _honeymoon(memory, namespace)
    retriever = Retriever(memory.store, memory.embedder, memory.settings.memory.retrieval,
                          vector_search=VectorSearchSettings(exact_max_turns=exact_max_turns))
    try:
        ranks = []
        for recipe in (WITHOUT, HIERARCHICAL):
            found = await retriever.search(namespace, QUESTION, 40, recipe.model_copy(update=DENSE))
            ranks.append([t for t, _ in found.turns].index(evidence))
        assert ranks[1] < ranks[0]
    finally:
        await retriever.aclose()
