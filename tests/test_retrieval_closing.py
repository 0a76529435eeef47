"""Closing a session never makes a turn harder to find: a short user turn between long assistant
answers that repeat the query's words keeps its rank when its session closes (context keys, a
summary and the session's signals added), under every recipe that reads them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kg import AsyncMemory
from tests.cypher_state import cypher_rows

START = datetime(2025, 2, 3, 9, tzinfo=timezone.utc)
QUERY = "which standing desk did I order?"
EVIDENCE = "Quick update: I ordered the walnut desk from Fjordline yesterday, it arrives Thursday."


def _answer(topic: str, n: int) -> str:
    """A long assistant answer (about 2,000 characters) that keeps saying "standing desk"."""
    points = [
        f"A standing desk for {topic} should reach your elbow height when you stand and sit.",
        "Check the standing desk's weight capacity if you keep two monitors and a laptop on it.",
        "Dual-motor standing desk frames are quieter and steadier than single-motor ones.",
        "A standing desk with memory presets saves you from adjusting it by hand every time.",
        "Leave room for an anti-fatigue mat in front of the standing desk.",
        "Cable trays under the standing desk keep wires from snagging as it moves.",
        "Compare return windows and the warranty on the motors before you buy.",
    ]
    return " ".join(f"{i + 1}. {p}" for i, p in enumerate(points * n))


SESSIONS = {
    "s-desk-1": [
        ("user", "I want a standing desk for my home office, what should I look for?"),
        ("assistant", _answer("a home office", 2)),
        ("user", EVIDENCE),
        ("assistant", _answer("your setup", 2) + " Enjoy the new standing desk you ordered!"),
    ],
    "s-desk-2": [
        ("user", "Should a standing desk for a small room be narrower?"),
        ("assistant", _answer("a small room", 2)),
        ("user", "And which chair goes with a standing desk?"),
        ("assistant", _answer("a chair", 1)),
    ],
    "s-desk-3": [
        ("user", "My sister asked me whether a standing desk helps with back pain."),
        ("assistant", _answer("back pain", 2)),
    ],
}


async def _rank(memory: AsyncMemory, namespace: str, recipe: str) -> int:
    hits = await memory.retrieve(namespace, QUERY, k=10, recipe=recipe)
    texts = [h.turn.text for h in hits]
    assert EVIDENCE in texts, f"{recipe}: the evidence turn is not in the top 10: {[t[:40] for t in texts]}"
    return texts.index(EVIDENCE) + 1


@pytest.mark.parametrize("recipe", ["hybrid", "hierarchical"])
async def test_closing_keeps_the_turn_between_long_answers_findable(
    memory: AsyncMemory, namespace: str, recipe: str
) -> None:
    for n, (sid, lines) in enumerate(SESSIONS.items()):
        start = START + timedelta(days=n)
        await memory.add_turns(namespace, sid, [
            {"role": role, "text": text, "ts": start + timedelta(minutes=i)} for i, (role, text) in enumerate(lines)])
    before = await _rank(memory, namespace, recipe)
    for sid in SESSIONS:
        assert await memory.close_session(namespace, sid) is not None
    keys = await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.context_text AS key", ns=namespace)
    assert len(keys) == 10 and all(r["key"] for r in keys)  # closing did add the context keys
    after = await _rank(memory, namespace, recipe)
    assert after <= before, f"{recipe}: rank {before} before closing, {after} after"
