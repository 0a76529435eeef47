"""Exact past views on the real server: reinforcements and reads are events, so a `known_at` view
shows the reinforcement count, last reinforcement, last read and confidence a fact had then."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kg import AsyncMemory
from kg.queries.confidence import score
from tests.cypher_state import cypher_rows

UTC = timezone.utc
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


async def test_known_at_shows_reinforcements_as_they_were(memory: AsyncMemory, namespace: str) -> None:
    for n in (1, 10, 20):  # said on day 1, repeated on days 10 and 20
        await memory.remember(namespace, "Maya", "likes", "jazz", valid_from=day(n), recorded_at=day(n))
    await memory.remember(namespace, "Maya", "lives_in", "Porto", valid_from=day(2), recorded_at=day(2))
    await memory.remember(namespace, "Maya", "lives_in", "Lisbon", valid_from=day(12), recorded_at=day(12))

    [now] = await memory.facts(namespace, "Maya", "likes")
    assert (now.reinforcement_count, now.last_reinforced_at) == (2, day(20))
    for known, count, last in ((day(5), 0, None), (day(15), 1, day(10)), (day(25), 2, day(20))):
        [then] = await memory.facts(namespace, "Maya", "likes", known_at=known)
        assert (then.reinforcement_count, then.last_reinforced_at) == (count, last), known
        cfg = memory.settings.memory.confidence
        expected = score(source="stated", reinforcement_count=count, recorded_at=then.recorded_at,
                         last_reinforced_at=last, last_accessed_at=None, ended=False, at=known, cfg=cfg)
        assert then.confidence == pytest.approx(expected)
    # a fact whose interval changed keeps its own count: Porto was never repeated
    [porto] = await memory.facts(namespace, "Maya", "lives_in", as_of=day(5), known_at=day(11))
    assert (porto.object_value, porto.reinforcement_count, porto.valid_to) == ("Porto", 0, None)
    [porto_later] = await memory.facts(namespace, "Maya", "lives_in", as_of=day(5), known_at=day(13))
    assert porto_later.valid_to == day(12)


async def test_known_at_shows_the_last_read_before_it(memory: AsyncMemory, namespace: str) -> None:
    await memory.remember(namespace, "Maya", "likes", "jazz", valid_from=day(1), recorded_at=day(1))
    before_read = datetime.now(UTC)
    [first] = await memory.facts(namespace, "Maya", "likes")  # a read, kept as a read event
    after_read = datetime.now(UTC)
    assert first.last_accessed_at is None  # "before this read touched it"
    [then] = await memory.facts(namespace, "Maya", "likes", known_at=before_read)
    assert then.last_accessed_at is None  # the read had not happened yet
    [later] = await memory.facts(namespace, "Maya", "likes", known_at=after_read)
    assert later.last_accessed_at is not None and before_read <= later.last_accessed_at <= after_read
    rows = await cypher_rows(memory, "MATCH (f:Fact {namespace: $ns}) RETURN size(f.read_at) AS reads", ns=namespace)
    assert [r["reads"] for r in rows] == [1]  # three reads within a minute: one read event
