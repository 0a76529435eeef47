"""Recency within a topic: when a later session restates or changes a value, the later turn ranks at
least as high as the earlier one; turns about other things keep their order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from kg import AsyncMemory
from kg.queries.fusion import later_first
from kg.queries.recipes import HYBRID

START = datetime(2025, 1, 6, 8, tzinfo=timezone.utc)


def test_later_first_moves_a_restatement_before_what_it_restates() -> None:
    when = {"a": 1, "b": 2, "c": 3, "x": 9}
    topic = {"a": "pb", "b": "pb", "c": "pb", "x": "other"}

    def restates(later: str, earlier: str) -> bool:
        return topic[later] == topic[earlier] and when[later] > when[earlier]

    assert later_first(["a", "x", "b"], restates) == ["b", "a", "x"]
    assert later_first(["a", "b", "x", "c"], restates) == ["c", "b", "a", "x"]
    assert later_first(["x", "c", "a"], restates) == ["x", "c", "a"]  # already in order: untouched
    assert later_first([], restates) == []


async def test_a_later_restated_value_ranks_above_the_earlier(memory: AsyncMemory, namespace: str) -> None:
    sessions = [
        ("s-jan", ["My 5K personal best is 27 minutes 10 seconds.", "I also swim twice a week."]),
        ("s-feb", ["I booked a ryokan in Kyoto for the spring.", "My sister visits in March."]),
        ("s-mar", ["My 5K personal best is now 25 minutes 40 seconds, since Saturday's race.", "The weather was cold."]),
    ]
    for n, (sid, texts) in enumerate(sessions):
        await memory.add_turns(namespace, sid, [
            {"role": "user", "text": t, "ts": START + timedelta(days=30 * n, minutes=i)} for i, t in enumerate(texts)])
    query = "what is my 5K personal best?"
    plain = HYBRID.model_copy(update={"boosts": HYBRID.boosts.model_copy(update={"restated": 0.0})})
    without = [h.turn.session_id for h in await memory.retrieve(namespace, query, k=3, recipe=plain)]
    assert without[:2] == ["s-jan", "s-mar"]  # by its words alone the earlier statement matches better
    for name in ("hybrid", "hierarchical"):
        hits = await memory.retrieve(namespace, query, k=3, recipe=name)
        assert [h.turn.session_id for h in hits][:2] == ["s-mar", "s-jan"], name
        assert hits[0].score >= hits[1].score  # the ranks keep their scores
