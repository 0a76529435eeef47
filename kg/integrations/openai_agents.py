"""The OpenAI Agents SDK's `Session` over the memory (`pip install 'kg-memory[openai-agents]'`).

    session = KgSession("chat-1", memory, namespace="acme")
    result = await Runner.run(agent, "Which database did we pick?", session=session)

`KgSession` implements the SDK's `Session` protocol (`get_items`, `add_items`, `pop_item`,
`clear_session`, as `SQLiteSession` does): the session's items are the turns of the kg session
`session_id`, one turn per item. A message item is a turn of its role (`developer` -> system) with its
text; a tool call is an assistant turn (`name arguments`), a tool's output a tool turn, other items
a turn of their kind's name. Each item is kept verbatim, so `get_items` returns exactly the items
added: the SDK compares them when it resumes or rewinds a run. `pop_item` and `clear_session` erase
(docs/forgetting.md). `memory` is a `Memory` or an `AsyncMemory` (the protocol is async only).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kg.core.extras import require

require("openai-agents", "agents")

from agents.memory.session_settings import SessionSettings

from kg.core.models.turns import Role, Turn
from kg.integrations.conversation import Conversation, Entry, readable

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from kg.memory import AsyncMemory, Memory

MESSAGE_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


class KgSession:
    """The SDK's `Session` protocol over one kg session (see the module's docstring)."""

    session_settings: SessionSettings | None = None

    def __init__(self, session_id: str, memory: Memory | AsyncMemory, namespace: str,
                 session_settings: SessionSettings | None = None) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self.conversation = Conversation(memory, namespace, session_id)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history in order; with `limit` (or the session settings' limit), the latest `limit` items."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        return [_item(t) for t in await self.conversation.aturns(limit)]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await self.conversation.aappend([_entry(i) for i in items])

    async def pop_item(self) -> TResponseInputItem | None:
        turn = await self.conversation.apop()
        return _item(turn) if turn is not None else None

    async def clear_session(self) -> None:
        await self.conversation.aclear()


def _entry(item: TResponseInputItem) -> Entry:
    data: dict[str, Any] = dict(item)
    kind = data.get("type") or "message"
    verbatim = json.dumps(data, ensure_ascii=False)
    external_id = data["id"] if isinstance(data.get("id"), str) and len(data["id"]) <= 200 else None
    if kind == "message" and data.get("role") in MESSAGE_ROLES:
        return Entry(MESSAGE_ROLES[data["role"]], readable(_text(data.get("content")), fallback=f"[{kind}]"),
                     verbatim, external_id=external_id)
    if kind.endswith("_output"):  # function_call_output, computer_call_output, ...
        return Entry("tool", readable(_text(data.get("output")), fallback=f"[{kind}]"), verbatim,
                     external_id=external_id)
    text = readable(f"{data['name']} {data.get('arguments', '')}" if isinstance(data.get("name"), str) else None,
                    _text(data.get("summary")), _text(data.get("content")), fallback=f"[{kind}]")
    return Entry("assistant", text, verbatim, external_id=external_id)


def _text(content: Any) -> str | None:
    """The text of a message's content: a string, or parts with `text` (input_text, output_text, ...)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return None


def _item(turn: Turn) -> TResponseInputItem:
    """The item as it was added; a turn written by another door (no verbatim) as a message of its role."""
    if turn.verbatim is not None:
        return json.loads(turn.verbatim)
    role = turn.role if turn.role in ("user", "assistant", "system") else "assistant"  # a tool's text, unpaired
    return {"role": role, "content": turn.text}


__all__ = ["KgSession"]
