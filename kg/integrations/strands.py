"""Strands Agents' session manager and a memory tool over the memory (`pip install 'kg-memory[strands]'`).

    agent = Agent(model=model, session_manager=KgSessionManager("chat-1", memory, "acme"),
                  tools=[memory_tool(memory, "acme")])

`KgSessionManager` is a Strands `SessionManager` (the hooks the agent calls as it runs): when the
agent starts, its messages are the turns of the kg session `session_id` (`initialize`); each message
the agent adds becomes a turn (`append_message`: its role, its text, `name input` of tool uses and
tool results' text), with Strands' own message kept verbatim, so a new agent on the same session
gets back exactly the messages, tool uses and results included. `redact_latest_message` rewrites the
last turn (the session is erased and written again, as `pop`). One agent per session: the messages
are the session's, not an agent's; the agent's `state` and its conversation manager's state are not
kept (kg keeps conversations), so `sync_agent` writes nothing.

`memory_tool(memory, namespace)` is a Strands tool, `search_memory(query)`: the turns the memory's
retriever ranks best (`search_turns`), one line each with date and speaker; with `session_id`, the
agent's own session is left out (its turns are the agent's messages already).

Strands calls both synchronously, from its own threads: `memory` is a `Memory` (the sync facade).
See docs/strands.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

from kg.core.extras import require

require("strands", "strands")

from strands import tool
from strands.session.session_manager import SessionManager
from strands.types.content import Message

from kg.core.models.turns import Role, Turn
from kg.integrations.conversation import Conversation, Entry, MemoryCalls, found_elsewhere, readable

if TYPE_CHECKING:
    from kg.memory import Memory


class KgSessionManager(SessionManager[Any]):
    """A Strands `SessionManager` over one kg session (see the module's docstring)."""

    def __init__(self, session_id: str, memory: Memory, namespace: str) -> None:
        self.session_id = session_id
        self.conversation = Conversation(memory, namespace, session_id)

    def initialize(self, agent: Any, **kwargs: Any) -> None:
        """The agent's messages: the session's, when it has any; else the agent's own are stored."""
        turns = self.conversation.turns()
        if turns:
            agent.messages = [_message(t) for t in turns]
        elif agent.messages:
            self.conversation.append([_entry(m) for m in agent.messages])

    def append_message(self, message: Message, agent: Any, **kwargs: Any) -> None:
        self.conversation.append([_entry(message)])

    def redact_latest_message(self, redact_message: Message, agent: Any, **kwargs: Any) -> None:
        if self.conversation.pop() is not None:
            self.conversation.append([_entry(redact_message)])

    def sync_agent(self, agent: Any, **kwargs: Any) -> None:
        return None  # the messages are written as they come; an agent's state is not kept (see the docstring)


def _entry(message: Message) -> Entry:
    texts: list[str] = []
    for block in message.get("content", []):
        if "text" in block:
            texts.append(block["text"])
        elif "toolUse" in block:
            texts.append(f"{block['toolUse']['name']} {json.dumps(block['toolUse'].get('input'), default=str)}")
        elif "toolResult" in block:
            texts.extend(c["text"] for c in block["toolResult"].get("content", []) if "text" in c)
    tool_results = any("toolResult" in b for b in message.get("content", []))
    role: Role = "tool" if tool_results else ("user" if message["role"] == "user" else "assistant")
    return Entry(role, readable(*texts, fallback="[message]"), json.dumps(message, default=str, ensure_ascii=False))


def _message(turn: Turn) -> Message:
    """The message as it was added; a turn written by another door (no verbatim) as a text message."""
    if turn.verbatim is not None:
        return json.loads(turn.verbatim)  # type: ignore[no-any-return, unused-ignore]  # Any without strands' types
    return {"role": "user" if turn.role == "user" else "assistant", "content": [{"text": turn.text}]}


def memory_tool(memory: Memory, namespace: str, k: int = 5, session_id: str | None = None) -> Callable[..., Any]:
    """A Strands tool that searches the memory of `namespace` (see the module's docstring); with
    `session_id`, that session's own turns (already the agent's messages) are left out."""
    calls = MemoryCalls(memory)

    @tool
    def search_memory(query: str) -> list[str]:
        """Search earlier conversations for what was said about a topic.

        Args:
            query: what to look for, in a few words or a question
        """
        return found_elsewhere(calls, namespace, query, k, session_id)

    return search_memory  # type: ignore[no-any-return, unused-ignore]  # Any without strands' types


__all__ = ["KgSessionManager", "memory_tool"]
