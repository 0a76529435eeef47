"""LlamaIndex's memory block and retriever over the memory (`pip install 'kg-memory[llamaindex]'`).

    block = KgMemoryBlock(memory=memory, namespace="acme")
    chat_memory = Memory.from_defaults(session_id="chat-1", memory_blocks=[block])    # llama_index.core.memory
    retriever = KgRetriever(memory, "acme", k=4)                                    # a BaseRetriever

`KgMemoryBlock` is a `BaseMemoryBlock[str]` for LlamaIndex's `Memory`. The messages that `Memory`
flushes out of its short-term queue (`aput`) become turns of the kg session of the same id (the
role's turn, its text; messages without text are skipped). Before each LLM call (`aget`), the block
asks the memory's retriever (`search_turns`) with the latest message's text and returns the best `k`
turns as lines, which `Memory` puts into the system message (its `insert_method`). The turns are
the namespace's, from every session: what was said long ago as much as what just left the queue.

`KgRetriever` answers a query with the turns the memory ranks best (`search_turns`), or with
`search="recall"` turns, facts and summaries by one score (`recall`), as `NodeWithScore`s of
`TextNode`s whose metadata say where each came from.

`memory` is a `Memory` or an `AsyncMemory` (the block is async, as LlamaIndex calls it; the retriever's
sync `retrieve` needs a `Memory`). See docs/llamaindex.md.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from kg.core.extras import require
from kg.core.vocabulary import SearchKind

require("llamaindex", "llama_index.core")

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import Field

from kg.core.models.recall import MemoryHit, RankedTurn
from kg.core.models.turns import Message, Role
from kg.integrations.conversation import TICK, MemoryCalls, lines

if TYPE_CHECKING:
    from kg.memory import AsyncMemory, Memory

ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "model": "assistant", "chatbot": "assistant",
                          "system": "system", "developer": "system", "tool": "tool", "function": "tool"}


class KgMemoryBlock(BaseMemoryBlock[str]):
    """A memory block of LlamaIndex's `Memory` over kg-memory (see the module's docstring)."""

    name: str = Field(default="kg_memory", description="The name of the memory block.")
    description: str | None = "Earlier conversations, found by kg-memory's retriever."
    memory: Any = Field(description="a kg Memory or AsyncMemory")
    namespace: str
    k: int = Field(default=3, ge=1, description="How many turns to bring back.")

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = next((_text(m) for m in reversed(messages or []) if _text(m)), "")
        if not query:
            return ""
        hits = await MemoryCalls(self.memory).arun(lambda memory: memory.search_turns(self.namespace, query, self.k))
        return "\n".join(f"- {line}" for line in lines(hits))

    async def _aput(self, messages: list[ChatMessage]) -> None:
        now = datetime.now(timezone.utc)
        stored = [Message(namespace=self.namespace, session_id=m.additional_kwargs.get("session_id"),
                          role=ROLES.get(str(m.role.value), "user"), text=_text(m), ts=now + i * TICK)
                  for i, m in enumerate(messages) if _text(m)]
        if stored:
            await MemoryCalls(self.memory).arun(lambda memory: memory.ingest(stored))


def _text(message: ChatMessage) -> str:
    return (message.content or "").strip()


class KgRetriever(BaseRetriever):
    """LlamaIndex's `BaseRetriever` over kg-memory (see the module's docstring)."""

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, k: int = 4,
                 search: SearchKind = "turns", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls = MemoryCalls(memory)
        self.namespace = namespace
        self.k = k
        self.search = search

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.calls.run(lambda memory: self._nodes(memory, query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await self.calls.arun(lambda memory: self._nodes(memory, query_bundle.query_str))

    async def _nodes(self, memory: AsyncMemory, query: str) -> list[NodeWithScore]:
        if self.search == "recall":
            return [_recalled(h) for h in await memory.recall(self.namespace, query, self.k)]
        return [_found(h) for h in await memory.search_turns(self.namespace, query, self.k)]


def _found(hit: RankedTurn) -> NodeWithScore:
    t = hit.turn
    node = TextNode(id_=t.id, text=t.text, metadata={"kind": "turn", "session_id": t.session_id, "role": t.role,
                                                      "speaker": t.speaker, "ts": t.ts.isoformat()})
    return NodeWithScore(node=node, score=hit.score)


def _recalled(hit: MemoryHit) -> NodeWithScore:
    node = TextNode(id_=hit.id, text=hit.text, metadata={"kind": hit.kind, "session_id": hit.session_id,
                                                          "ts": hit.ts.isoformat() if hit.ts else None})
    return NodeWithScore(node=node, score=hit.score)


__all__ = ["KgMemoryBlock", "KgRetriever"]
