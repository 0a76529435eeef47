"""Microsoft Agent Framework's history and context providers over the memory
(`pip install 'kg-memory[agent-framework]'`).

    agent = Agent(client, instructions="...", context_providers=[
        KgHistoryProvider(memory, "acme"),          # the session's messages, loaded before and saved after each run
        KgContextProvider(memory, "acme"),          # earlier sessions' turns, as instructions
    ])
    session = agent.create_session(session_id="chat-1")
    await agent.run("Which database did we pick?", session=session)

`KgHistoryProvider` is a `HistoryProvider`: an agent session's messages are the turns of the kg
session of the same id, one turn per `Message` (its role, its text, the author's name as the
speaker, its id), the framework's own JSON of it (`Message.to_json`) kept verbatim, so
`get_messages` returns the messages saved, function calls and results included. The
`HistoryProvider` flags (`load_messages`, `store_inputs`, ...) work as in the framework's own providers.

`KgContextProvider` is a `ContextProvider`: before each run it asks the memory's retriever
(`search_turns`) with the run's input text and adds the best `k` turns of the namespace's other
sessions to the instructions (the current session's own turns are already in its history).

`memory` is a `Memory` or an `AsyncMemory` (the providers are async). See docs/agent-framework.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from kg.core.extras import require

require("agent-framework", "agent_framework")

from agent_framework import ContextProvider, HistoryProvider, Message

from kg.core.models.turns import ROLES, Turn
from kg.integrations.conversation import Conversation, Entry, MemoryCalls, afound_elsewhere, readable

if TYPE_CHECKING:
    from agent_framework import AgentSession, SessionContext, SupportsAgentRun

    from kg.memory import AsyncMemory, Memory


class KgHistoryProvider(HistoryProvider):
    """The framework's `HistoryProvider` over kg sessions (see the module's docstring)."""

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, source_id: str = "kg_history",
                 **flags: Any) -> None:
        super().__init__(source_id, **flags)
        self.memory = memory
        self.namespace = namespace

    async def get_messages(self, session_id: str | None, *, state: dict[str, Any] | None = None,
                           **kwargs: Any) -> list[Message]:
        return [_message(t) for t in await self._conversation(session_id).aturns()]

    async def save_messages(self, session_id: str | None, messages: Sequence[Message], *,
                            state: dict[str, Any] | None = None, **kwargs: Any) -> None:
        await self._conversation(session_id).aappend([_entry(m) for m in messages])

    def _conversation(self, session_id: str | None) -> Conversation:
        if not session_id:
            raise ValueError("session_id: KgHistoryProvider keeps a session's messages under its id; the agent "
                             "session has none")
        return Conversation(self.memory, self.namespace, session_id)


def _entry(message: Message) -> Entry:
    role = message.role if message.role in ROLES else "assistant"
    calls = [f"{c.name} {c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments, default=str)}"
             for c in message.contents if c.type == "function_call"]
    results = [str(c.result) for c in message.contents if c.type == "function_result" and c.result is not None]
    kinds = sorted({c.type for c in message.contents if c.type != "text"})
    return Entry(role, readable(message.text, *calls, *results,  # type: ignore[arg-type]
                                fallback=f"[{', '.join(kinds) or 'message'}]"),
                 verbatim=message.to_json(), speaker=message.author_name or None,
                 external_id=message.message_id if message.message_id and len(message.message_id) <= 200 else None)


def _message(turn: Turn) -> Message:
    """The message as it was saved; a turn written by another door (no verbatim) as a text message."""
    if turn.verbatim is not None:
        return Message.from_dict(json.loads(turn.verbatim))
    return Message(role=turn.role, contents=[turn.text], author_name=turn.speaker, message_id=turn.id)


class KgContextProvider(ContextProvider):
    """The framework's `ContextProvider` bringing earlier sessions' turns (see the module's docstring)."""

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, k: int = 5,
                 source_id: str = "kg_memory") -> None:
        super().__init__(source_id)
        self.calls = MemoryCalls(memory)
        self.namespace = namespace
        self.k = k

    async def before_run(self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext,
                         state: dict[str, Any]) -> None:
        query = " ".join(m.text for m in context.input_messages if m.text).strip()
        if not query:
            return
        found = await afound_elsewhere(self.calls, self.namespace, query, self.k, context.session_id)
        if found:
            context.extend_instructions(self.source_id, "From earlier conversations with the user:\n"
                                        + "\n".join(f"- {line}" for line in found))


__all__ = ["KgContextProvider", "KgHistoryProvider"]
