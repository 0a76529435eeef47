"""The Strands door: Strands' own `Agent`, tool loop and session hooks, with a scripted `Model` (no
network), keeping the conversation in `KgSessionManager` and searching it with `memory_tool`, on the
real Neo4j. Strands pins `mcp<2.2`, which the `server` extra's `mcp>=2.3` excludes: .ci/run runs
this file in a venv of its own (kg-memory with the `strands` extra only); elsewhere it skips."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

pytest.importorskip("strands", reason="the strands extra is not installed (it has a venv of its own in .ci/run)")

from strands import Agent

from kg import Memory
from kg.integrations.strands import KgSessionManager, memory_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))  # as `python examples/strands_agent.py`
from strands_agent import OfflineModel, text_reply, tool_call  # the example's offline model

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


class ScriptedModel(OfflineModel):
    """Streams a script, one step per call (a text, or a tool use as {"tool": name, "input": {...}}), and
    keeps every message list it was sent."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.seen: list[list[Any]] = []

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        self.seen.append([dict(m) for m in messages])
        step = self.script.pop(0)
        events = tool_call(f"t{len(self.seen)}", step["tool"], step["input"]) if isinstance(step, dict) else \
            text_reply(step)
        for event in events:
            yield event


def texts(messages: list[Any]) -> list[str]:
    return [b["text"] for m in messages for b in m["content"] if "text" in b]


def test_a_new_agent_continues_the_session(sync_memory: Memory, sync_ns: str) -> None:
    first = Agent(model=ScriptedModel(["Noted: TimescaleDB."]), callback_handler=None,
                  session_manager=KgSessionManager("chat-1", sync_memory, sync_ns))
    first("We picked TimescaleDB for the sensor data.")

    model = ScriptedModel(["You picked TimescaleDB."])
    again = Agent(model=model, callback_handler=None, session_manager=KgSessionManager("chat-1", sync_memory, sync_ns))
    assert str(again("Which database did we pick?")).strip() == "You picked TimescaleDB."
    assert texts(model.seen[0]) == ["We picked TimescaleDB for the sensor data.", "Noted: TimescaleDB.",
                                    "Which database did we pick?"]
    turns = sync_memory.turns(sync_ns, "chat-1")
    assert [(t.role, t.text) for t in turns] == [
        ("user", "We picked TimescaleDB for the sensor data."), ("assistant", "Noted: TimescaleDB."),
        ("user", "Which database did we pick?"), ("assistant", "You picked TimescaleDB.")]
    third = Agent(model=ScriptedModel([]), callback_handler=None,
                  session_manager=KgSessionManager("chat-1", sync_memory, sync_ns))
    assert third.messages == again.messages  # exactly, as Strands keeps them


def test_the_memory_tool_and_tool_messages_round_trip(sync_memory: Memory, sync_ns: str) -> None:
    sync_memory.add_turns(sync_ns, "retro", [{"role": "user", "text": "We picked TimescaleDB for the sensor data.",
                                         "ts": T0, "speaker": "Maya"}])
    model = ScriptedModel([{"tool": "search_memory", "input": {"query": "sensor database"}}, "TimescaleDB."])
    agent = Agent(model=model, callback_handler=None,
                  tools=[memory_tool(sync_memory, sync_ns, k=1, session_id="chat-2")],
                  session_manager=KgSessionManager("chat-2", sync_memory, sync_ns))
    agent("Which database for the sensors?")
    result = [b["toolResult"] for b in model.seen[1][-1]["content"] if "toolResult" in b][0]
    assert result["content"] == [{"text": '["2025-03-01 Maya: We picked TimescaleDB for the sensor data."]'}]
    turns = sync_memory.turns(sync_ns, "chat-2")
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert turns[1].text == 'search_memory {"query": "sensor database"}'
    restored = Agent(model=ScriptedModel([]), callback_handler=None,
                     session_manager=KgSessionManager("chat-2", sync_memory, sync_ns))
    assert restored.messages == agent.messages
