"""The PydanticAI door: PydanticAI's own `Agent` with its `FunctionModel` (no network) keeps its
message history in `KgMessageHistory` and calls `memory_tool`, on the real Neo4j."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra is not installed")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from kg import AsyncMemory, Memory
from kg.integrations.pydantic_ai import KgMessageHistory, memory_tool

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def prompts(messages: list[ModelMessage]) -> list[str]:
    return [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, UserPromptPart) and isinstance(p.content, str)]


async def test_history_in_and_out_across_runs(memory: AsyncMemory, namespace: str) -> None:
    seen: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(prompts(messages))
        return ModelResponse(parts=[TextPart(f"answer {len(seen)}")])

    agent = Agent(FunctionModel(model), instructions="Be brief.")
    history = KgMessageHistory(memory, namespace, "chat-1")
    first = await agent.run("We picked TimescaleDB for the sensor data.", message_history=await history.amessages())
    await history.aadd(first.new_messages())

    again = KgMessageHistory(memory, namespace, "chat-1")  # another process, the same session
    second = await agent.run("Which database did we pick?", message_history=await again.amessages())
    await again.aadd(second.new_messages())
    assert seen[-1] == ["We picked TimescaleDB for the sensor data.", "Which database did we pick?"]
    assert await again.amessages() == second.all_messages()  # exactly, times and usage included
    assert await again.amessages(limit=1) == second.all_messages()[-1:]
    turns = await memory.turns(namespace, "chat-1")
    assert [(t.role, t.text) for t in turns] == [("user", "We picked TimescaleDB for the sensor data."),
                                                 ("assistant", "answer 1"), ("user", "Which database did we pick?"),
                                                 ("assistant", "answer 2")]
    await again.aclear()
    assert await again.amessages() == [] and await memory.session(namespace, "chat-1") is None


def test_the_memory_tool_finds_an_earlier_session(sync_memory: Memory, namespace: str) -> None:
    sync_memory.add_turns(namespace, "retro", [{"role": "user", "text": "We picked TimescaleDB for the sensor data.",
                                                "ts": T0, "speaker": "Maya"}])

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            assert [t.name for t in info.function_tools] == ["search_memory"]
            return ModelResponse(parts=[ToolCallPart("search_memory", {"query": "sensor database"})])
        return ModelResponse(parts=[TextPart(f"From memory: {returns[0].content[0]}")])

    agent = Agent(FunctionModel(model), tools=[memory_tool(sync_memory, namespace, k=1)])
    history = KgMessageHistory(sync_memory, namespace, "chat-2")
    result = agent.run_sync("Which database for the sensors?", message_history=history.messages())
    assert result.output == "From memory: 2025-03-01 Maya: We picked TimescaleDB for the sensor data."
    history.add(result.new_messages())
    assert history.messages() == result.all_messages()  # the tool call and its return come back as they were
    turns = sync_memory.turns(namespace, "chat-2")
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert turns[1].text == 'search_memory {"query":"sensor database"}'


async def test_turns_of_other_doors_read_as_messages(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "s", [{"role": "user", "text": "hi", "ts": T0},
                                            {"role": "assistant", "text": "hello", "ts": T0.replace(second=1)}])
    got = await KgMessageHistory(memory, namespace, "s").amessages()
    assert isinstance(got[0], ModelRequest) and got[0].parts[0].content == "hi"
    assert isinstance(got[1], ModelResponse) and got[1].parts[0].content == "hello"
