"""Plain message lists, in OpenAI's Chat Completions shape or Anthropic's Messages shape.

A file holds a conversation, or several: a JSON array of messages; an object with `messages` (and
optionally `id` / `session_id` / `conversation_id`, and a `created_at`); a JSON array of such
objects; or JSON Lines, each line a message or a conversation object (OpenAI's fine-tuning files).

- OpenAI: {role: system | developer | user | assistant | tool, content: a string or a list of parts
  ({type: text, text}), tool_calls: [{id, function: {name, arguments}}], tool_call_id}.
- Anthropic: {role: user | assistant, content: a string or a list of blocks (text, tool_use {id,
  name, input}, tool_result {tool_use_id, content, is_error}, thinking, image)}; a top-level `system`.

System and developer messages are no turns (instructions, not conversation). Neither format has
times: a message's own `timestamp` / `created_at` (ISO 8601 or Unix seconds) is kept when present;
the others follow the conversation's `created_at`, else `start`, one second apart. A conversation's
session id is its own id, else `session_id` (the file's name), numbered by the conversation's
place in the file when the file holds several.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Iterator

from kg.core.models.turns import Message
from kg.core.vocabulary import Provider

from ..loaders import Rejected, json_lines
from .exchanges import Exchanges, instant, json_elements, plain_text

Format = Provider
FORMATS: tuple[str, ...] = ("openai", "anthropic")
SPACING = timedelta(seconds=1)


def read_messages(data: bytes, name: str, namespace: str, fmt: Format, session_id: str,
                  start: datetime | None, tools: bool = True) -> Iterator[Message | Rejected]:
    """The turns of the file's conversations (`name`: its name, for the file:line of what is
    rejected). `start`: the time of messages that carry none (a conversation that needs it and
    lacks it is rejected)."""
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    entries = list(json_lines(data.splitlines(), name) if _json_lines(data) else json_elements(data, name))
    conversations: list[tuple[int, str, list[Any], dict[str, Any]]] = []  # (place in the file, where, ...)
    loose: list[tuple[str, Any]] = []  # messages of a file that is one conversation
    for place, entry in enumerate(entries, start=1):
        if isinstance(entry, Rejected):
            yield entry
            continue
        where, value = entry
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            conversations.append((place, where, value["messages"], value))
        elif isinstance(value, dict) and "role" in value:
            loose.append((where, value))
        else:
            yield Rejected(where, "expected a message ({role, content}) or a conversation ({messages: [...]})")
    if loose:
        conversations.insert(0, (1, loose[0][0], [m for _, m in loose], {"_wheres": [w for w, _ in loose]}))
    several = len(entries) > 1 and not loose
    for place, where, messages, meta in conversations:
        own = meta.get("id") or meta.get("session_id") or meta.get("conversation_id")
        sid = str(own) if own else (f"{session_id}-{place}" if several else session_id)
        try:
            base = instant(meta.get("created_at")) or start
        except ValueError as exc:
            yield Rejected(where, f"created_at: {exc}")
            continue
        wheres = meta.get("_wheres") or [f"{where} (message {i + 1})" for i in range(len(messages))]
        yield from _conversation(Exchanges(namespace, sid, tools), fmt, messages, base, wheres)


def _conversation(exchanges: Exchanges, fmt: Format, messages: list[Any], base: datetime | None,
                  wheres: list[str]) -> Iterator[Message | Rejected]:
    for i, (message, where) in enumerate(zip(messages, wheres)):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            yield Rejected(where, "expected a message object with a role")
            continue
        try:
            own = instant(message.get("timestamp", message.get("created_at")))
        except ValueError as exc:
            yield Rejected(where, f"timestamp: {exc}")
            continue
        if own is not None:
            ts = own
        elif base is not None:
            ts = base + i * SPACING
        else:
            yield Rejected(where, "timestamp: the message has none, and neither has its conversation "
                                  "(`created_at`): give the time its conversation started (`start`)")
            continue
        role, content = message["role"], message.get("content")
        if role in ("system", "developer"):
            continue
        if role not in ("user", "assistant", "tool"):
            yield Rejected(where, f"role: {role!r} is not one of user, assistant, tool, system, developer")
            continue
        yield from (_openai if fmt == "openai" else _anthropic)(exchanges, role, message, content, ts, where)
    yield from exchanges.flush()


def _openai(exchanges: Exchanges, role: str, message: dict[str, Any], content: Any, ts: datetime,
            where: str) -> Iterator[Message | Rejected]:
    if role == "tool":
        exchanges.result(str(message.get("tool_call_id")), content)
        return
    text = plain_text(content)
    if role == "user":
        yield from exchanges.prompt(text, ts, where, _id(message))
        return
    if text.strip():
        exchanges.answer(text, ts, where, _id(message))
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function") or {}
            exchanges.call(str(call.get("id")), str(function.get("name") or ""), function.get("arguments"), ts, where)


def _anthropic(exchanges: Exchanges, role: str, message: dict[str, Any], content: Any, ts: datetime,
               where: str) -> Iterator[Message | Rejected]:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        yield Rejected(where, "content: expected a string or a list of blocks")
        return
    texts = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            exchanges.call(str(block.get("id")), str(block.get("name") or ""), block.get("input"), ts, where)
        elif kind == "tool_result":
            exchanges.result(str(block.get("tool_use_id")), block.get("content"), bool(block.get("is_error")))
    text = "\n\n".join(t for t in texts if t.strip())
    if role == "user" and text.strip():
        yield from exchanges.prompt(text, ts, where, _id(message))
    elif role == "assistant" and text.strip():
        exchanges.answer(text, ts, where, _id(message))


def _json_lines(data: bytes) -> bool:
    """JSON Lines (several JSON values, one a line) rather than one JSON document."""
    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        return exc.msg == "Extra data"
    except UnicodeDecodeError:
        return False
    return False


def _id(message: dict[str, Any]) -> str | None:
    value = message.get("id")
    return str(value) if value is not None else None
