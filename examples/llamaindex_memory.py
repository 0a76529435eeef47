"""A LlamaIndex chat engine whose `Memory` has a kg-memory block (offline: LlamaIndex's `MockLLM`,
which answers with the prompt it was given, so you see what the memory put in it). Run from the
checkout with the extra installed (pip install -e '.[llamaindex]'): python examples/llamaindex_memory.py

A first conversation's oldest messages flush out of `Memory`'s short-term queue into `KgMemoryBlock` (kg turns of
session "monday"); in a second chat the block finds them and `Memory` adds them to the system message.
"""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory as ChatMemory
from sensor_chat import main  # the frame the examples share (sensor_chat.py)

from kg import Memory
from kg.integrations.llamaindex import KgMemoryBlock, KgRetriever


def chat_memory(memory: Memory, namespace: str, session_id: str) -> ChatMemory:
    block = KgMemoryBlock(memory=memory, namespace=namespace, k=2)
    return ChatMemory.from_defaults(session_id=session_id, token_limit=60, chat_history_token_ratio=0.5,
                                    token_flush_size=20, memory_blocks=[block])


async def run(memory: Memory, namespace: str) -> list[str]:
    monday = chat_memory(memory, namespace, "monday")
    for i, line in enumerate(["Maya owns the ingestion service.", "Good to know.",
                              "We picked TimescaleDB for the sensor data.", "Noted, TimescaleDB.",
                              "The dashboard ships in May.", "May it is."]):
        await monday.aput(ChatMessage(role="user" if i % 2 == 0 else "assistant", content=line))
    friday = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=chat_memory(memory, namespace, "friday"))
    reply = await friday.achat("Which database did we pick for the sensors?")
    shown = [line for line in reply.response.splitlines() if line.startswith("- ")]
    nodes = await KgRetriever(memory, namespace, k=1).aretrieve("who owns the ingestion service?")
    return ["the memory block put into friday's system message:", *shown,
            f"KgRetriever, 'who owns the ingestion service?': {nodes[0].node.get_content()} ({nodes[0].score:.2f})"]


if __name__ == "__main__":
    main(run, "example-llamaindex")
