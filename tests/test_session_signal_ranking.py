"""Session quality and outcome as a ranking signal (`session_signal_weight`): at 0 the ranking is
the one without it, above 0 the turn of the session that went well ranks first, and a session of
unknown quality is neither favoured nor penalised."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kg import AsyncMemory
from kg.queries.recipes import recipe
from kg.queries.session_signals import session_signal
from tests.cypher_state import cypher_rows

TEXT = "The staging database password rotates every ninety days through the vault job."


def test_unknown_quality_and_outcome_are_neutral() -> None:
    assert session_signal(None, None) == 0.0
    assert session_signal(None, "ongoing") == 0.0
    assert session_signal(0.5, None) == 0.0
    assert session_signal(1.0, "success") == pytest.approx(1.0)
    assert session_signal(0.0, "failure") == pytest.approx(-1.0)
    assert session_signal(0.9, "success") > session_signal(None, None) > session_signal(0.2, "failure")


async def _session(memory: AsyncMemory, ns: str, sid: str, at: datetime) -> None:
    # the same two turns in each session: every ranked list scores them alike
    await memory.add_turns(ns, sid, [
        {"role": "user", "speaker": "Dana", "text": "How often does the staging password rotate?", "ts": at},
        {"role": "assistant", "speaker": "Assistant", "text": TEXT, "ts": at + timedelta(seconds=5)}])
    await memory.close_session(ns, sid)


async def _grade(memory: AsyncMemory, ns: str, sid: str, quality: float | None, outcome: str | None) -> None:
    await cypher_rows(memory, "MATCH (sm:Summary {kind: 'session'})-[:SUMMARIZES]->(:Session {namespace: $ns, id: $sid})"
                      " WHERE sm.expired_at IS NULL SET sm.quality = $q, sm.outcome = $o",
                      ns=ns, sid=sid, q=quality, o=outcome)


async def _order(memory: AsyncMemory, ns: str, name: str, weight: float) -> list[str]:
    found = await memory.search_turns(ns, "staging password rotation vault", k=3,
                                      recipe=recipe(name, session_signal_weight=weight))
    return [r.turn.session_id for r in found if r.turn.text == TEXT]


@pytest.mark.parametrize("name", ["hierarchical", "hybrid", "flat"])
async def test_the_session_that_went_well_ranks_first(memory: AsyncMemory, namespace: str, name: str) -> None:
    day = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
    await _session(memory, namespace, "s1", day)
    await _session(memory, namespace, "s2", day)
    unweighted = await _order(memory, namespace, name, 0.0)
    assert sorted(unweighted) == ["s1", "s2"]
    # the session whose turn ranks first without the signal is the one that failed: the signal must
    # reverse the order, or this test would prove nothing
    failed, good = unweighted
    await _grade(memory, namespace, failed, 0.2, "failure")
    await _grade(memory, namespace, good, 0.9, "success")
    assert await _order(memory, namespace, name, 0.0) == unweighted  # weight 0: the ranking without the signal
    assert await _order(memory, namespace, name, 1.0) == [good, failed]

    # unknown quality and outcome: the same place as with no signal at all
    await _grade(memory, namespace, failed, None, None)
    await _grade(memory, namespace, good, None, None)
    assert await _order(memory, namespace, name, 1.0) == unweighted
