"""The Microsoft Agent Framework door: the framework's own `Agent`, sessions and function invocation,
with a scripted chat client (no network), keeping history in `KgHistoryProvider` and recalling
earlier sessions through `KgContextProvider`, on the real Neo4j."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("agent_framework", reason="the agent-framework extra is not installed")

from agent_framework import Agent, BaseChatClient, ChatResponse, Content, Message
from agent_framework._tools import FunctionInvocationLayer

from kg import AsyncMemory
from kg.integrations.agent_framework import KgContextProvider, KgHistoryProvider


class ScriptedClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """Answers from a script (a text, or a function call) and keeps what each call was sent."""

    def __init__(self, script: list[Any]) -> None:
        super().__init__()
        self.script = list(script)
        self.sent: list[str] = []

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        self.sent.append("\n".join(m.text for m in messages) + "\n" + str(options.get("instructions", "")))
        return ChatResponse(messages=[Message(role="assistant", contents=[self.script.pop(0)])])


def weather(city: str) -> str:
    """The weather in a city."""
    return f"18C and sunny in {city}"


def plain(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in messages]


async def test_history_and_recall_through_a_real_agent(memory: AsyncMemory, namespace: str) -> None:
    client = ScriptedClient(["Noted: TimescaleDB.",
                             Content.from_function_call(call_id="call_1", name="weather",
                                                        arguments='{"city": "Paris"}'),
                             "It is 18C and sunny in Paris."])
    history = KgHistoryProvider(memory, namespace)
    agent = Agent(client, "Be brief.", tools=[weather], context_providers=[history])
    session = agent.create_session(session_id="chat-1")
    await agent.run("We picked TimescaleDB for the sensor data.", session=session)
    reply = await agent.run("Weather in Paris?", session=session)
    assert reply.text == "It is 18C and sunny in Paris."
    assert "We picked TimescaleDB for the sensor data." in client.sent[1]  # the history, loaded from kg

    turns = await memory.turns(namespace, "chat-1")
    assert [(t.role, t.text) for t in turns] == [
        ("user", "We picked TimescaleDB for the sensor data."), ("assistant", "Noted: TimescaleDB."),
        ("user", "Weather in Paris?"), ("assistant", 'weather {"city": "Paris"}'), ("tool", "18C and sunny in Paris"),
        ("assistant", "It is 18C and sunny in Paris.")]
    saved = await history.get_messages("chat-1")
    assert saved[3].contents[0].type == "function_call" and saved[4].contents[0].type == "function_result"
    assert plain(await KgHistoryProvider(memory, namespace).get_messages("chat-1")) == plain(saved)

    # another agent, another session: KgContextProvider brings the first session's turns
    other = ScriptedClient(["You picked TimescaleDB."])
    recalling = Agent(other, "Be brief.", context_providers=[KgHistoryProvider(memory, namespace),
                                                             KgContextProvider(memory, namespace, k=2)])
    await recalling.run("Which database did we pick for the sensors?",
                        session=recalling.create_session(session_id="chat-2"))
    assert "From earlier conversations with the user:" in other.sent[0]
    assert "We picked TimescaleDB for the sensor data." in other.sent[0]
    assert [t.role for t in await memory.turns(namespace, "chat-2")] == ["user", "assistant"]


async def test_a_history_needs_a_session_id(memory: AsyncMemory, namespace: str) -> None:
    with pytest.raises(ValueError, match="session_id"):
        await KgHistoryProvider(memory, namespace).get_messages(None)
