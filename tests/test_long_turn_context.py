"""A long turn's context key counts less (`Recipe.long_turn_context_weight`): once its session closes, a
turn of more than `long_turn_chars` (an assistant's long answer) loses part of the votes its context key
(the turn with its neighbours' words) brings, so it does not outrank the short turn the question is
about on words it only sits beside. Short turns, turns whose session is still open (their own key
stands in) and questions that ask for the assistant's words keep every vote. On the exact path (the
in-memory cache) and through the indexes (the Cypher candidate rows) alike."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kg import AsyncMemory
from kg.core.settings.memory import VectorSearchSettings
from kg.queries.recipes import HIERARCHICAL, HYBRID, Recipe
from kg.queries.retrieve import Retriever

START = datetime(2025, 5, 2, 18, tzinfo=timezone.utc)
ANSWER = " ".join([
    "Sintra makes an easy weekend from Lisbon: the train from Rossio takes forty minutes.",
    "Pena Palace opens at nine and the queue is shortest then; book the timed ticket online.",
    "Quinta da Regaleira's initiation well is worth the walk, and the gardens take two hours.",
    "For dinner, Tascantiga in the old town does small plates; reserve on a Friday or Saturday.",
    "Cabo da Roca is a short bus ride west if you want the sunset over the Atlantic.",
    "Bring layers: the hills are often ten degrees cooler and misty when Lisbon is sunny.",
])
TURNS = [
    ("user", "Can you suggest a weekend trip near Lisbon for our anniversary?"),
    ("assistant", ANSWER),
    ("user", "Thanks! I booked the hotel in Sintra for the anniversary weekend."),
    ("assistant", "Lovely, enjoy it."),
]
ASKS_USER = "which hotel did I book for the anniversary weekend?"
ASKS_ASSISTANT = "what did you recommend for the anniversary weekend?"
WHOLE = {"long_turn_context_weight": 1.0}


async def _scores(retriever: Retriever, namespace: str, query: str, recipe: Recipe) -> dict[str, float]:
    found = await retriever.search(namespace, query, 10, recipe)
    return dict(found.turns)


@pytest.mark.parametrize("exact_max_turns", [3000, 0])  # the exact path, then the indexes
@pytest.mark.parametrize("base", [HYBRID, HIERARCHICAL], ids=["hybrid", "hierarchical"])
async def test_a_long_turn_keeps_half_its_context_votes_once_keyed(
    memory: AsyncMemory, namespace: str, exact_max_turns: int, base: Recipe
) -> None:
    assert len(ANSWER) > base.long_turn_chars and base.long_turn_context_weight == 0.5  # the defaults
    await memory.add_turns(namespace, "s1", [
        {"role": role, "text": text, "ts": START + timedelta(minutes=i)} for i, (role, text) in enumerate(TURNS)])
    turns = await memory.turns(namespace, "s1")
    long_turn = turns[1].id
    retriever = Retriever(memory.store, memory.embedder, memory.settings.memory.retrieval,
                          vector_search=VectorSearchSettings(exact_max_turns=exact_max_turns))
    whole = base.model_copy(update=WHOLE)
    try:
        # open session: no context keys yet, the turns' own keys stand in and nothing is cut
        assert await _scores(retriever, namespace, ASKS_USER, base) == \
            await _scores(retriever, namespace, ASKS_USER, whole)
        await memory.close_session(namespace, "s1")
        cut = await _scores(retriever, namespace, ASKS_USER, base)
        kept = await _scores(retriever, namespace, ASKS_USER, whole)
        assert set(cut) == set(kept) == {t.id for t in turns}
        assert cut[long_turn] < kept[long_turn] - 1e-3  # its context votes count half
        for t in turns:
            if t.id != long_turn:  # short turns keep every vote
                assert cut[t.id] == pytest.approx(kept[t.id], abs=1e-9), t.text
        # asked for the assistant's words, the long answer keeps them whole
        assert await _scores(retriever, namespace, ASKS_ASSISTANT, base) == \
            pytest.approx(await _scores(retriever, namespace, ASKS_ASSISTANT, whole), abs=1e-9)
    finally:
        await retriever.aclose()

