"""The LangChain door: LangChain's own standard retriever tests (`langchain_tests`) against
`KgRetriever`, and `KgChatMessageHistory` driven by LangChain's `RunnableWithMessageHistory` with
LangChain's fake chat model, on the real Neo4j."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
pytest.importorskip("langchain_tests", reason="langchain-tests (the dev extra) is not installed")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_tests.integration_tests import RetrieversIntegrationTests

from kg import AsyncMemory, Memory
from kg.integrations.langchain import KgChatMessageHistory, KgRetriever

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
NOTES = ["We picked TimescaleDB for the sensor data.", "The sensor dashboard ships in May.",
         "Maya owns the sensor ingestion service.", "Lunch was ramen at the corner place."]


class TestKgRetrieverStandard(RetrieversIntegrationTests):
    """LangChain's standard retriever tests, untouched; only the constructor's arguments are ours."""

    @pytest.fixture(autouse=True)
    def _seeded(self, sync_memory: Memory, sync_ns: str) -> None:
        sync_memory.add_turns(sync_ns, "notes", [{"role": "user", "text": t, "ts": T0 + timedelta(minutes=i)}
                                                  for i, t in enumerate(NOTES)])
        self.params = {"memory": sync_memory, "namespace": sync_ns}

    @property
    def retriever_constructor(self) -> type[KgRetriever]:
        return KgRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return self.params

    @property
    def retriever_query_example(self) -> str:
        return "which database for the sensors?"


def test_retriever_documents_say_where_they_come_from(sync_memory: Memory, sync_ns: str) -> None:
    sync_memory.add_turns(sync_ns, "retro", [{"role": "user", "text": t, "ts": T0 + timedelta(minutes=i),
                                              "speaker": "Maya"} for i, t in enumerate(NOTES)])
    [doc] = KgRetriever(memory=sync_memory, namespace=sync_ns).invoke("did we pick TimescaleDB?", k=1)
    assert doc.page_content == NOTES[0]
    assert doc.metadata["session_id"] == "retro" and doc.metadata["speaker"] == "Maya"
    assert doc.metadata["kind"] == "turn" and doc.metadata["score"] > 0
    recalled = KgRetriever(memory=sync_memory, namespace=sync_ns, search="recall", k=2).invoke("sensor database")
    assert recalled and all(d.metadata["kind"] in ("turn", "fact", "summary") for d in recalled)


def _chain(history_of: Any, seen: list[list[BaseMessage]], answers: list[str]) -> RunnableWithMessageHistory:
    prompt = ChatPromptTemplate.from_messages([("system", "You are a helpful assistant."),
                                               MessagesPlaceholder("history"), ("human", "{question}")])

    def spy(value: PromptValue) -> PromptValue:
        seen.append(value.to_messages())
        return value

    model = FakeMessagesListChatModel(responses=[AIMessage(content=a) for a in answers])
    return RunnableWithMessageHistory(prompt | RunnableLambda(spy) | model, history_of,
                                      input_messages_key="question", history_messages_key="history")


def test_a_chain_remembers_the_conversation_across_processes(sync_memory: Memory, sync_ns: str) -> None:
    seen: list[list[BaseMessage]] = []
    answers = ["Noted: TimescaleDB.", "You picked TimescaleDB."]
    chain = _chain(lambda sid: KgChatMessageHistory(sync_memory, sync_ns, sid), seen, answers)
    config = {"configurable": {"session_id": "chat-1"}}
    chain.invoke({"question": "We picked TimescaleDB for the sensors."}, config=config)

    # a new chain and new history objects, as in another process: the model sees the first exchange
    chain = _chain(lambda sid: KgChatMessageHistory(sync_memory, sync_ns, sid), seen, answers[1:])
    out = chain.invoke({"question": "Which database did we pick?"}, config=config)
    assert out.content == "You picked TimescaleDB."
    assert [(type(m).__name__, m.content) for m in seen[1]] == [
        ("SystemMessage", "You are a helpful assistant."),
        ("HumanMessage", "We picked TimescaleDB for the sensors."), ("AIMessage", "Noted: TimescaleDB."),
        ("HumanMessage", "Which database did we pick?")]

    turns = sync_memory.turns(sync_ns, "chat-1")  # kept as turns the memory searches
    assert [(t.role, t.text) for t in turns] == [
        ("user", "We picked TimescaleDB for the sensors."), ("assistant", "Noted: TimescaleDB."),
        ("user", "Which database did we pick?"), ("assistant", "You picked TimescaleDB.")]
    [hit] = sync_memory.search_turns(sync_ns, "sensor database", k=1)
    assert hit.turn.session_id == "chat-1"


def test_messages_come_back_as_they_were_added(sync_memory: Memory, sync_ns: str) -> None:
    history = KgChatMessageHistory(sync_memory, sync_ns, "tools")
    sent: list[BaseMessage] = [
        SystemMessage(content="Be brief."),
        HumanMessage(content="Weather in Paris?", id="m1"),
        AIMessage(content="", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "call_1"}]),
        ToolMessage(content="18C and sunny", tool_call_id="call_1", name="weather"),
        AIMessage(content=[{"type": "text", "text": "It is 18C and sunny."}], name="forecaster"),
        HumanMessage(content="thanks"), HumanMessage(content="thanks"),  # the same text twice: two turns
    ]
    history.add_messages(sent[:3])
    history.add_messages(sent[3:])
    again = KgChatMessageHistory(sync_memory, sync_ns, "tools").messages
    assert again == sent
    turns = sync_memory.turns(sync_ns, "tools")
    assert [t.role for t in turns] == ["system", "user", "assistant", "tool", "assistant", "user", "user"]
    assert turns[2].text == 'weather {"city": "Paris"}' and turns[4].speaker == "forecaster"

    history.clear()
    assert history.messages == [] and sync_memory.session(sync_ns, "tools") is None
    history.clear()  # clearing an empty history is no error


async def test_async_calls_over_both_facades(memory: AsyncMemory, namespace: str, sync_memory: Memory) -> None:
    for mem in (memory, sync_memory):
        history = KgChatMessageHistory(mem, namespace, f"async-{type(mem).__name__}")
        await history.aadd_messages([HumanMessage(content="Lisbon is lovely in May."), AIMessage(content="It is.")])
        assert [m.content for m in await history.aget_messages()] == ["Lisbon is lovely in May.", "It is."]
        await history.aclear()
        assert await history.aget_messages() == []
    docs = await KgRetriever(memory=memory, namespace=namespace).ainvoke("anything")
    assert docs == []


async def test_turns_of_other_doors_read_as_messages(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "s1", [{"role": "user", "text": "hi", "ts": T0},
                                             {"role": "assistant", "text": "hello", "ts": T0 + timedelta(seconds=1)},
                                             {"role": "tool", "text": "42", "ts": T0 + timedelta(seconds=2)}])
    got = await KgChatMessageHistory(memory, namespace, "s1").aget_messages()
    assert [(m.type, m.content) for m in got] == [("human", "hi"), ("ai", "hello"), ("ai", "42")]


def test_sync_calls_over_an_async_memory_name_the_fix(memory: AsyncMemory, namespace: str) -> None:
    with pytest.raises(TypeError, match="give it a Memory"):
        KgChatMessageHistory(memory, namespace, "s").messages  # noqa: B018 - reading it raises
