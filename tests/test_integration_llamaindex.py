"""The LlamaIndex door: LlamaIndex's own `Memory` (short-term queue flushing into `KgMemoryBlock`), its
`SimpleChatEngine` and `RetrieverQueryEngine` with its `MockLLM` (no network), on the real Neo4j."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory as ChatMemory
from llama_index.core.query_engine import RetrieverQueryEngine

from kg import AsyncMemory, Memory
from kg.integrations.llamaindex import KgMemoryBlock, KgRetriever

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def chat_memory(memory: AsyncMemory | Memory, namespace: str, session_id: str) -> ChatMemory:
    # a short queue, so older messages flush into the block as a long conversation's would
    return ChatMemory.from_defaults(session_id=session_id, token_limit=60, chat_history_token_ratio=0.5,
                                    token_flush_size=20, memory_blocks=[KgMemoryBlock(memory=memory,
                                                                                      namespace=namespace)])


async def test_flushed_messages_become_turns_and_come_back_as_context(memory: AsyncMemory, namespace: str) -> None:
    first = chat_memory(memory, namespace, "chat-1")
    said = ["We picked TimescaleDB for the sensor data.", "Noted, TimescaleDB it is.",
            "The dashboard ships in May.", "Good, May it is.", "Lunch was ramen today.", "Sounds tasty."]
    for i, text in enumerate(said):
        await first.aput(ChatMessage(role="user" if i % 2 == 0 else "assistant", content=text))
    turns = await memory.turns(namespace, "chat-1")
    assert turns and [t.text for t in turns] == said[:len(turns)]  # the oldest, flushed in order
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant", "user"][:len(turns)]

    # a new conversation: the block brings the earlier one into the system message
    second = chat_memory(memory, namespace, "chat-2")
    messages = await second.aget(input="Which database did we pick for the sensors?")
    system = messages[0]
    assert system.role == "system" and "We picked TimescaleDB for the sensor data." in system.content
    assert "<kg_memory>" in system.content  # the block's name, as LlamaIndex wraps it


async def test_a_chat_engine_sees_the_memory(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "old", [{"role": "user", "text": "Maya prefers uv over pip.", "ts": T0}])
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=chat_memory(memory, namespace, "chat"))
    reply = await engine.achat("How should I install packages, uv or pip?")
    assert "Maya prefers uv over pip." in reply.response  # MockLLM answers with the prompt it was given


def test_a_query_engine_over_the_retriever(sync_memory: Memory, namespace: str) -> None:
    sync_memory.add_turns(namespace, "notes", [
        {"role": "user", "text": t, "ts": T0 + timedelta(minutes=i), "speaker": "Maya"}
        for i, t in enumerate(["We picked TimescaleDB for the sensor data.", "Lunch was ramen."])])
    retriever = KgRetriever(sync_memory, namespace, k=1)
    [node] = retriever.retrieve("did we pick TimescaleDB?")
    assert node.node.get_content() == "We picked TimescaleDB for the sensor data." and node.score
    assert node.node.metadata["session_id"] == "notes" and node.node.metadata["speaker"] == "Maya"
    response = RetrieverQueryEngine.from_args(retriever, llm=MockLLM()).query("did we pick TimescaleDB?")
    assert "We picked TimescaleDB for the sensor data." in str(response)
    assert [n.node.node_id for n in response.source_nodes] == [node.node.node_id]
    recalled = KgRetriever(sync_memory, namespace, k=2, search="recall").retrieve("sensor database")
    assert recalled and all(n.node.metadata["kind"] in ("turn", "fact", "summary") for n in recalled)


async def test_async_retrieval_over_an_async_memory(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "s", [{"role": "user", "text": "Lisbon is lovely in May.", "ts": T0}])
    [node] = await KgRetriever(memory, namespace).aretrieve("Lisbon")
    assert node.node.get_content() == "Lisbon is lovely in May."
    with pytest.raises(TypeError, match="give it a Memory"):
        KgRetriever(memory, namespace).retrieve("Lisbon")
