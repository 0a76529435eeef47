"""Whose words answer a question: asked in the first person ("where do I keep ..."), the user's own
statement ranks above the assistant's long replies on the same topic; asked about the assistant's
words ("which ... did you recommend?"), the assistant's reply ranks first (`Boosts.role`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kg import AsyncMemory
from kg.queries.analysis import addressed_role
from kg.queries.recipes import HIERARCHICAL, HYBRID, Recipe

START = datetime(2025, 2, 3, 9, tzinfo=timezone.utc)
STATED = "For now I keep my old sneakers on the shoe rack in the hall closet."
RECOMMENDED = ("For white sneakers I recommend the Jason Markk Essential kit: a soft brush, its foam cleaner "
               "and a microfibre cloth.")


def _answer(topic: str) -> str:
    """A long assistant answer (about 1,500 characters) that keeps saying "old sneakers"."""
    points = [
        f"Old sneakers {topic} last longer when you keep them somewhere cool, dry and dark.",
        "Where you keep old sneakers matters: a closet shelf beats a damp basement or a hot garage.",
        "Stuff old sneakers with paper so they keep their shape while you keep them stored.",
        "Keep old sneakers out of plastic bags; a breathable cotton bag lets moisture escape.",
        "Clean old sneakers before you keep them away, or the dirt sets into the mesh.",
    ]
    return " ".join(f"{i + 1}. {p}" for i, p in enumerate(points * 2))


SESSIONS = {
    "s-store": [
        ("user", "Winter is coming, any tips for the wardrobe?"),
        ("assistant", _answer("in winter")),
        ("user", STATED),
        ("assistant", _answer("in a closet") + " A shoe rack in a closet is a fine place to keep old sneakers."),
    ],
    "s-clean": [
        ("user", "What cleaner works on white sneakers?"),
        ("assistant", RECOMMENDED),
        ("user", "Thanks! How often should that be done?"),
        ("assistant", _answer("you wear often")),
    ],
}


def test_the_role_a_question_asks_for() -> None:
    assert addressed_role("Where do I keep my old sneakers?") == "user"
    assert addressed_role("I'm looking back at our chat: which cleaner did you recommend?") == "assistant"
    assert addressed_role("Can you remind me of the hotel from last time?") == "assistant"
    assert addressed_role("What was your recommendation for the desk?") == "assistant"
    assert addressed_role("Where does Maya keep her sneakers?") is None  # third parties: no role
    assert addressed_role("Which sneakers are waterproof?") is None


def _without_role(recipe: Recipe) -> Recipe:
    return recipe.model_copy(update={"boosts": recipe.boosts.model_copy(update={"role": 0.0})})


async def _rank(memory: AsyncMemory, namespace: str, query: str, text: str, recipe: Recipe) -> int:
    hits = await memory.retrieve(namespace, query, k=10, recipe=recipe)
    texts = [h.turn.text for h in hits]
    return texts.index(text) + 1 if text in texts else 99


@pytest.mark.parametrize("recipe", [HYBRID, HIERARCHICAL], ids=lambda r: r.name)
async def test_first_person_questions_find_the_users_words_and_you_questions_the_assistants(
    memory: AsyncMemory, namespace: str, recipe: Recipe
) -> None:
    assert recipe.boosts.role > 0  # the named recipes weigh whose words a question asks for
    for n, (sid, lines) in enumerate(SESSIONS.items()):
        start = START + timedelta(days=n)
        await memory.add_turns(namespace, sid, [
            {"role": role, "text": text, "ts": start + timedelta(minutes=i)} for i, (role, text) in enumerate(lines)])
        await memory.close_session(namespace, sid)

    mine = "Where do I keep my old sneakers?"
    assert await _rank(memory, namespace, mine, STATED, recipe) == 1
    # without the boost the long answers that repeat the question's words come first
    assert await _rank(memory, namespace, mine, STATED, _without_role(recipe)) > 1

    yours = "Which cleaner did you recommend for white sneakers?"
    assert await _rank(memory, namespace, yours, RECOMMENDED, recipe) == 1
