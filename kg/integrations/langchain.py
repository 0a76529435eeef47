"""LangChain's chat history and retriever over the memory (`pip install 'kg-memory[langchain]'`).

    history = KgChatMessageHistory(memory, "acme", session_id="chat-1")   # a BaseChatMessageHistory
    retriever = KgRetriever(memory=memory, namespace="acme", k=4)         # a BaseRetriever

`KgChatMessageHistory` keeps a conversation as the turns of one kg session: each message one turn
(human -> user, ai -> assistant, system, tool/function -> tool; `name` the speaker), its text what
the memory reads, LangChain's own dict of it (`message_to_dict`) kept verbatim, so `messages` gives
back the same messages, tool calls and ids included. `clear` erases the session. `memory` is a
`Memory` (sync and async calls) or an `AsyncMemory` (async calls: `aget_messages`, `aadd_messages`,
`aclear`).

`KgRetriever` answers a query with the turns the memory's retriever ranks best (`search_turns`: the
configured recipe), or with `search="recall"` turns, facts and summaries by one score (`recall`),
as `Document`s whose metadata say where each came from. See docs/langchain.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from kg.core.extras import require
from kg.core.vocabulary import SearchKind

require("langchain", "langchain_core")

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from kg.core.models.recall import MemoryHit, RankedTurn
from kg.core.models.turns import Role, Turn
from kg.integrations.conversation import Entry, History, MemoryCalls, readable

if TYPE_CHECKING:
    from kg.memory import AsyncMemory, Memory

ROLES: dict[str, Role] = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}


class KgChatMessageHistory(BaseChatMessageHistory):
    """LangChain's `BaseChatMessageHistory` over one kg session (see the module's docstring)."""

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, session_id: str) -> None:
        self.history = History(memory, namespace, session_id, _entry, _message)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a property, as in LangChain's own stores
        return self.history.messages()

    async def aget_messages(self) -> list[BaseMessage]:
        return await self.history.amessages()

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.history.add(messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await self.history.aadd(messages)

    def clear(self) -> None:
        self.history.clear()

    async def aclear(self) -> None:
        await self.history.aclear()


def _entry(message: BaseMessage) -> Entry:
    own = getattr(message, "role", None)  # a ChatMessage carries its own role
    role: Role = ROLES.get(message.type) or (own if own in ("user", "assistant", "system", "tool") else "user")
    calls = [f"{c['name']} {json.dumps(c['args'], ensure_ascii=False)}" for c in getattr(message, "tool_calls", [])]
    return Entry(role=role, text=readable(message.text, *calls, fallback=f"[{message.type} message]"),
                 verbatim=json.dumps(message_to_dict(message), ensure_ascii=False, default=str),
                 speaker=message.name or None, external_id=message.id)


def _message(turn: Turn) -> BaseMessage:
    """The message as it was added; a turn written by another door (no verbatim) as its role's message."""
    if turn.verbatim is not None:
        return messages_from_dict([json.loads(turn.verbatim)])[0]
    kind = {"user": "human", "assistant": "ai", "system": "system"}.get(turn.role)
    if kind is None:  # a tool turn without its call id cannot be a ToolMessage: an AI note of it
        return AIMessage(content=turn.text, name=turn.speaker, id=turn.id)
    return messages_from_dict([{"type": kind, "data": {"content": turn.text, "name": turn.speaker, "id": turn.id}}])[0]


class KgRetriever(BaseRetriever):
    """LangChain's `BaseRetriever` over the memory (see the module's docstring). `k` is the number of
    documents, also per call: `retriever.invoke(query, k=2)`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(description="a kg Memory or AsyncMemory")
    namespace: str
    k: int = Field(4, ge=1)
    search: SearchKind = "turns"

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None) -> list[Document]:
        return MemoryCalls(self.memory).run(lambda memory: self._documents(memory, query, k or self.k))

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       k: int | None = None) -> list[Document]:
        return await MemoryCalls(self.memory).arun(lambda memory: self._documents(memory, query, k or self.k))

    async def _documents(self, memory: AsyncMemory, query: str, k: int) -> list[Document]:
        if self.search == "recall":
            return [_recalled(h) for h in await memory.recall(self.namespace, query, k)]
        return [_found(h) for h in await memory.search_turns(self.namespace, query, k)]


def _found(hit: RankedTurn) -> Document:
    t = hit.turn
    return Document(page_content=t.text, id=t.id, metadata={
        "kind": "turn", "session_id": t.session_id, "role": t.role, "speaker": t.speaker, "ts": t.ts.isoformat(),
        "score": hit.score, "recipe": hit.recipe})


def _recalled(hit: MemoryHit) -> Document:
    return Document(page_content=hit.text, id=hit.id, metadata={
        "kind": hit.kind, "session_id": hit.session_id, "ts": hit.ts.isoformat() if hit.ts else None,
        "score": hit.score, "confidence": hit.confidence})


__all__ = ["KgChatMessageHistory", "KgRetriever"]
