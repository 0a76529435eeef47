"""The OpenAI Agents SDK door: the SDK's own `Runner` and `Agent` with a scripted `Model` (no
network) run against `KgSession` on the real Neo4j, and against the SDK's `SQLiteSession`, the
reference: both must hold the same items and show the model the same history."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

pytest.importorskip("agents", reason="the openai-agents extra is not installed")

from agents import Agent, Model, ModelResponse, RunConfig, Runner, SQLiteSession, Usage, function_tool
from agents.memory.session_settings import SessionSettings
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from kg import AsyncMemory, Memory
from kg.integrations.openai_agents import KgSession

RUN = RunConfig(tracing_disabled=True)


def said(text: str, n: int) -> ResponseOutputMessage:
    return ResponseOutputMessage(id=f"msg_{n}", role="assistant", status="completed", type="message",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


class ScriptedModel(Model):
    """Answers from a script, one output list per call, and keeps every input it was given."""

    def __init__(self, script: list[list[Any]]) -> None:
        self.script = list(script)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        return ModelResponse(output=self.script.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run Runner.run")


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"18C and sunny in {city}"


def script() -> list[list[Any]]:
    return [
        [said("Noted: TimescaleDB for the sensors.", 1)],
        [ResponseFunctionToolCall(id="fc_1", call_id="call_1", type="function_call", name="weather",
                                  arguments='{"city": "Paris"}')],
        [said("It is 18C and sunny in Paris.", 2)],
        [said("You picked TimescaleDB.", 3)],
    ]


async def converse(session: Any) -> ScriptedModel:
    model = ScriptedModel(script())
    agent = Agent(name="assistant", instructions="Be brief.", model=model, tools=[weather])
    await Runner.run(agent, "We picked TimescaleDB for the sensor data.", session=session, run_config=RUN)
    await Runner.run(agent, "Weather in Paris?", session=session, run_config=RUN)
    result = await Runner.run(agent, "Which database did we pick?", session=session, run_config=RUN)
    assert result.final_output == "You picked TimescaleDB."
    return model


async def test_a_runner_keeps_its_history_in_kg_as_in_sqlite(memory: AsyncMemory, namespace: str) -> None:
    ours, reference = KgSession("chat-1", memory, namespace), SQLiteSession("chat-1")
    seen_ours, seen_reference = await converse(ours), await converse(reference)
    assert seen_ours.inputs == seen_reference.inputs  # the model saw the same history, call by call
    assert seen_ours.inputs[-1][0] == {"content": "We picked TimescaleDB for the sensor data.", "role": "user"}
    items = await ours.get_items()
    assert items == await reference.get_items() and len(items) == 8
    assert await ours.get_items(limit=2) == items[-2:] and await ours.get_items(limit=0) == []

    # a new session object, as in another process, reads the same history
    assert await KgSession("chat-1", memory, namespace).get_items() == items
    turns = await memory.turns(namespace, "chat-1")
    assert [(t.role, t.text) for t in turns] == [
        ("user", "We picked TimescaleDB for the sensor data."), ("assistant", "Noted: TimescaleDB for the sensors."),
        ("user", "Weather in Paris?"), ("assistant", 'weather {"city": "Paris"}'), ("tool", "18C and sunny in Paris"),
        ("assistant", "It is 18C and sunny in Paris."),
        ("user", "Which database did we pick?"), ("assistant", "You picked TimescaleDB.")]
    assert turns[1].external_id == "msg_1"
    [hit] = await memory.search_turns(namespace, "sensor database", k=1)
    assert hit.turn.session_id == "chat-1"


async def test_pop_and_clear_as_the_protocol_says(memory: AsyncMemory, namespace: str) -> None:
    session = KgSession("s", memory, namespace)
    assert await session.pop_item() is None
    await session.add_items([{"role": "user", "content": "one"}, {"role": "user", "content": "one"},
                             {"role": "assistant", "content": "two"}])
    assert await session.pop_item() == {"role": "assistant", "content": "two"}
    await session.add_items([{"role": "user", "content": "three"}])
    assert await session.get_items() == [{"role": "user", "content": "one"}, {"role": "user", "content": "one"},
                                         {"role": "user", "content": "three"}]
    limited = KgSession("s", memory, namespace, session_settings=SessionSettings(limit=1))
    assert await limited.get_items() == [{"role": "user", "content": "three"}]
    await session.clear_session()
    assert await session.get_items() == [] and await memory.session(namespace, "s") is None
    await session.clear_session()


async def test_over_a_sync_memory_from_another_loop(sync_memory: Memory, namespace: str) -> None:
    session = KgSession("sync", sync_memory, namespace)  # its calls run on the Memory's own loop
    result = await Runner.run(Agent(name="a", model=ScriptedModel([[said("hello", 1)]])), "hi", session=session,
                              run_config=RUN)
    assert result.final_output == "hello"
    assert [t.text for t in sync_memory.turns(namespace, "sync")] == ["hi", "hello"]


@pytest.fixture(scope="module")
def sync_memory() -> Any:
    from kg import load_settings

    with Memory(load_settings()) as memory:
        yield memory
