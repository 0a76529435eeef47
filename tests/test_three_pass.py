"""Three-pass enrichment (`[memory.indexing] passes = 3`) through the real instructor + Anthropic SDK
against the local fake endpoint: the session call (pass 1), the signals (pass 2) and the quality
(pass 3), each prompt version stored on what it produced, every stored signal citing a turn of the
session, a hallucinated turn id re-asked once and never stored; the offline extractor fills what
rules can tell and leaves the rest unknown.

The recorded pass 2 and 3 answers cite turns as `{t<idx>}`: turn ids are made by the memory, so
the test fills in the ids of the session it wrote before the answers are served."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from kg import AsyncMemory
from kg.core.models.signals import SIGNAL_LISTS
from kg.core.prompts.enrichment import QUALITY_V1, SIGNALS_V1
from kg.core.prompts.extraction import ChunkTurn
from kg.core.prompts.session import SESSION_V1
from kg.core.settings.tree import Settings
from kg.ingest.summaries.passes import OFFLINE_SIGNALS, repeated_instructions
from tests.cypher_state import cypher_rows
from tests.fake_llm import FakeLLM, Reply, SeenRequest, anthropic_echo, fake_llm, recording

pytestmark = pytest.mark.neo4j

T0 = datetime(2026, 2, 3, 10, tzinfo=timezone.utc)
TURNS = [("user", "Always install packages with uv."), ("assistant", "Noted: uv for installs."),
         ("user", "Add httpx to the project please."), ("assistant", "Run pip install httpx."),
         ("user", "I already told you: use uv, not pip."), ("assistant", "Sorry. uv add httpx; pinned httpx to 0.27.")]
OK, BAD, QUALITY = "anthropic/signals_tool_use_ok", "anthropic/signals_tool_use_unknown_turn", \
    "anthropic/quality_tool_use_ok"
STORED = """MATCH (s:Session {namespace: $ns, id: 's1'})<-[:SUMMARIZES]-(sm:Summary {kind: 'session'})
            WHERE sm.expired_at IS NULL
            RETURN sm.prompt_version AS pass1, sm.signals AS signals, sm.quality AS quality,
                   s.llm_calls AS calls"""


def _settings(fake: FakeLLM | None, passes: int = 3, **indexing: Any) -> Settings:
    if fake is None:
        return Settings(memory={"indexing": {"backend": "offline", "passes": passes}})
    service = {"provider": "anthropic", "model": "claude-haiku-4-5", "base_url": fake.url,
               "api_key": "sk-fake-three-pass-0000", "timeout_s": 10.0, "max_retries": 2, "transport_retries": 0}
    small = {**service, "model": "claude-small"}
    return Settings(llm={"services": {"fake": service, "small": small}},
                    memory={"indexing": {"backend": "fake", "passes": passes, **indexing}})


def _filled(name: str, ids: list[str]) -> Reply:
    """A recorded answer with `{t<idx>}` replaced by the id of the session's turn `idx`."""
    reply = recording(name)
    text = json.dumps(reply.body)
    for idx, tid in enumerate(ids):
        text = text.replace("{t%d}" % idx, tid)
    reply.body = json.loads(text)
    return reply


def _tool(request: SeenRequest) -> str:
    return (request.body or {}).get("tool_choice", {}).get("name", "")


async def _close(settings: Settings, fake: FakeLLM | None, answers: list[str | Reply],
                 extra: list[tuple[str, str]] = ()) -> tuple[dict[str, Any], list[str], Any]:  # type: ignore[assignment]
    """Write the session, close it (summary + passes), index it; the stored state as Cypher sees it."""
    async with AsyncMemory(settings) as memory:
        ns = f"test-3pass-{uuid.uuid4().hex[:10]}"
        try:
            await memory.add_turns(ns, "s1", [
                {"role": r, "speaker": "Dana" if r == "user" else "Assistant", "text": x,
                 "ts": T0 + timedelta(seconds=10 * i)} for i, (r, x) in enumerate([*TURNS, *extra])])
            ids = [t.id for t in sorted(await memory.turns(ns, "s1"), key=lambda t: t.idx)]
            if fake is not None:
                fake.script(anthropic_echo, *[_filled(a, ids) if isinstance(a, str) else a for a in answers])
            await memory.close_session(ns, "s1")
            await memory.index_session(ns, "s1")
            [row] = await cypher_rows(memory, STORED, ns=ns)
            [summary] = [s for s in await memory.summaries(ns, "s1") if s.kind == "session"]
            row["signals"] = json.loads(row["signals"]) if row["signals"] else None
            return row, ids, summary
        finally:
            await memory.delete_namespace(ns)


def _cited(signals: dict[str, Any]) -> dict[str, list[str]]:
    return {name: [s["turn_id"] for s in signals[name]] for name in SIGNAL_LISTS if signals.get(name) is not None}


async def test_three_passes_three_calls_each_version_stored(fake_llm: FakeLLM) -> None:
    row, ids, summary = await _close(_settings(fake_llm), fake_llm, [OK, QUALITY])
    assert [_tool(r) for r in fake_llm.requests] == ["SessionAnswer", "SignalsAnswer", "QualityAnswer"]
    assert row["calls"] == 3  # the meter counted the three passes on the session; indexing reused pass 1
    signals = row["signals"]
    assert row["pass1"] == SESSION_V1
    assert (signals["signals_prompt_version"], signals["quality_prompt_version"]) == (SIGNALS_V1, QUALITY_V1)
    assert signals["signals_model"] == signals["quality_model"] == "claude-haiku-4-5"
    assert row["quality"] == 0.6  # pass 3's score replaced the session call's
    assert _cited(signals) == {
        "decisions": [], "corrections": [], "frustration_signals": [ids[4]], "repeated_instructions": [ids[4]],
        "rules_expressed": [ids[0]], "new_knowledge": [ids[5]], "what_worked": [ids[5]], "what_failed": [ids[4]]}
    assert signals["frustration_signals"][0]["quote"] == "I already told you: use uv, not pip."
    # pass 2 read the transcript and pass 1's frame; pass 3 passes 1 and 2, not the transcript
    assert "<turn id=" in fake_llm.requests[1].text() and "<frame>" in fake_llm.requests[1].text()
    assert "<turn id=" not in fake_llm.requests[2].text() and "<signals>" in fake_llm.requests[2].text()
    assert summary.signals is not None and summary.signals.model_dump(mode="json") == signals  # the public view


async def test_a_hallucinated_turn_id_is_reasked_and_never_stored(fake_llm: FakeLLM) -> None:
    row, ids, _ = await _close(_settings(fake_llm), fake_llm, [BAD, OK, QUALITY])
    assert [_tool(r) for r in fake_llm.requests] == ["SessionAnswer", "SignalsAnswer", "SignalsAnswer",
                                                     "QualityAnswer"]
    reask = fake_llm.requests[2].text()
    assert "t-17" in reask and "is not a turn of this session" in reask
    assert row["calls"] == 4  # the re-ask is paid for, and counted
    assert "t-17" not in json.dumps(row["signals"])
    assert _cited(row["signals"])["frustration_signals"] == [ids[4]]  # the re-ask's answer


async def test_a_reask_that_still_hallucinates_stores_only_the_valid_items(fake_llm: FakeLLM) -> None:
    row, ids, _ = await _close(_settings(fake_llm), fake_llm, [BAD, BAD, QUALITY])
    # one re-ask, although the service allows two: the second answer's unknown id is dropped
    assert [_tool(r) for r in fake_llm.requests] == ["SessionAnswer", "SignalsAnswer", "SignalsAnswer",
                                                     "QualityAnswer"]
    cited = _cited(row["signals"])
    assert cited["frustration_signals"] == [] and cited["repeated_instructions"] == [ids[4]]
    assert set(ids) >= {i for found in cited.values() for i in found}


async def test_pass_three_on_the_quality_service(fake_llm: FakeLLM) -> None:
    row, _, _ = await _close(_settings(fake_llm, quality_service="small"), fake_llm, [OK, QUALITY])
    assert [r.body["model"] for r in fake_llm.requests] == ["claude-haiku-4-5", "claude-haiku-4-5", "claude-small"]
    assert (row["signals"]["signals_model"], row["signals"]["quality_model"]) == ("claude-haiku-4-5", "claude-small")


async def test_when_pass_three_fails_pass_two_is_kept_and_its_own_stay_unknown(fake_llm: FakeLLM) -> None:
    broken = Reply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}})
    row, ids, _ = await _close(_settings(fake_llm), fake_llm, [OK, broken])
    signals = row["signals"]
    assert signals["what_worked"] is None and signals["what_failed"] is None
    assert signals["quality_prompt_version"] is None and signals["signals_prompt_version"] == SIGNALS_V1
    assert _cited(signals)["repeated_instructions"] == [ids[4]]


async def test_an_unknown_quality_service_is_an_error_naming_it(fake_llm: FakeLLM) -> None:
    with pytest.raises(ValueError, match="memory.indexing.quality_service = 'tiny'"):
        await _close(_settings(fake_llm, quality_service="tiny"), fake_llm, [])


async def test_one_pass_asks_once(fake_llm: FakeLLM) -> None:
    row, _, summary = await _close(_settings(fake_llm, passes=1), fake_llm, [])
    assert [_tool(r) for r in fake_llm.requests] == ["SessionAnswer"] and row["calls"] == 1
    assert row["signals"] is None and summary.signals is None


async def test_offline_fills_what_it_can_and_leaves_the_rest_unknown() -> None:
    row, ids, _ = await _close(_settings(None), None, [], extra=[
        ("user", "Add httpx to the project, please!"), ("user", "No, use uv instead of pip."),
        ("user", "Let's go with httpx 0.27.")])
    signals = row["signals"]
    assert signals["signals_prompt_version"] == OFFLINE_SIGNALS and not row["calls"]
    assert _cited(signals)["repeated_instructions"] == [ids[6]]
    assert _cited(signals)["corrections"] == [ids[7]]  # the offline extractor's patterns
    assert _cited(signals)["decisions"] == [ids[8]]
    for unknown in ("frustration_signals", "rules_expressed", "new_knowledge", "what_worked", "what_failed"):
        assert signals[unknown] is None
    assert signals["quality_prompt_version"] is None and row["quality"] is None


def test_repeated_instructions_are_the_user_saying_the_same_words_again() -> None:
    turns = [ChunkTurn(id="a", idx=0, text="Use uv, not pip."), ChunkTurn(id="b", idx=1, role="assistant",
             text="Use uv, not pip."), ChunkTurn(id="c", idx=2, text="use UV not pip!"), ChunkTurn(id="d", idx=3,
             text="ok thanks"), ChunkTurn(id="e", idx=4, text="ok thanks")]
    assert [s.turn_id for s in repeated_instructions(turns)] == ["c"]


async def test_the_http_door_shows_the_signals_where_it_shows_summaries() -> None:
    from kg.http import create_app
    from tests.http_client import running

    settings = _settings(None)
    async with AsyncMemory(settings) as memory:
        ns = f"test-3pass-http-{uuid.uuid4().hex[:10]}"
        app = create_app(settings.model_copy(update={"http": settings.http.model_copy(update={"keys": {}})}),
                         memory=memory)
        try:
            async with running(app) as api:
                turns = [{"role": "user", "text": t, "ts": f"2025-05-01T12:0{i}:00Z"} for i, t in enumerate(
                    ["Deploy the docs site tonight.", "Deploy the docs site tonight!"])]
                assert (await api.post(f"/v1/namespaces/{ns}/sessions", json={"session_id": "s1", "turns": turns})
                        ).status_code < 300
                closed = (await api.post(f"/v1/namespaces/{ns}/sessions/s1/close")).json()
                [listed] = [s for s in (await api.get(f"/v1/namespaces/{ns}/sessions/s1/summaries")).json()
                            if s["kind"] == "session"]
            ids = [t.id for t in sorted(await memory.turns(ns, "s1"), key=lambda t: t.idx)]
        finally:
            await memory.delete_namespace(ns)
    for shown in (closed, listed):
        assert shown["signals"]["signals_prompt_version"] == OFFLINE_SIGNALS
        assert [s["turn_id"] for s in shown["signals"]["repeated_instructions"]] == [ids[1]]
        assert shown["signals"]["what_failed"] is None
