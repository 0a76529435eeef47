"""ChatGPT's data export, `conversations.json`, into sessions of turns.

The file is an array of conversations. Each has an `id` (`conversation_id`), a `title`, a
`create_time` (Unix seconds) and a `mapping`: a tree of nodes {id, message, parent, children}, one
branch per edit or regeneration; `current_node` is the leaf of the branch the user last saw, and
that branch, followed from the leaf to the root, is the conversation. A message has `author.role`
(user, assistant, tool, system), `create_time`, and `content` by `content_type`: `text` and
`multimodal_text` (`parts`: strings and, for images, asset objects), `code` (a tool call the
assistant makes: `recipient` is the tool), `execution_output`, and others that are no turns
(`thoughts`, `reasoning_recap`, context the user set). System messages and those hidden from the
conversation are no turns; tool messages are the results of the answer's tool calls. A session per
conversation, with its id; a turn keeps its message's id and time.
"""

from __future__ import annotations

from typing import Any, Iterator

from kg.core.models.turns import Attachment, Message

from ..loaders import Rejected
from .exchanges import Exchanges, instant, json_elements, plain_text

SKIPPED_CONTENT = ("thoughts", "reasoning_recap", "user_editable_context", "model_editable_context",
                   "system_error")


def read_chatgpt(data: bytes, name: str, namespace: str, tools: bool = True) -> Iterator[Message | Rejected]:
    """The turns of every conversation of the export (`name`: the file's name, for file:line)."""
    for entry in json_elements(data, name):
        if isinstance(entry, Rejected):
            yield entry
            continue
        where, conversation = entry
        try:
            nodes = _branch(conversation)
        except ValueError as exc:
            yield Rejected(where, str(exc))
            continue
        session_id = str(conversation.get("conversation_id") or conversation.get("id"))
        exchanges = Exchanges(namespace, session_id, tools)
        calls: dict[str, str] = {}  # tool name -> the id of its latest call, which its next result answers
        started = conversation.get("create_time")
        for node in nodes:
            message = node.get("message")
            if not isinstance(message, dict):
                continue
            try:
                ts = instant(message.get("create_time")) or instant(started)
            except ValueError as exc:
                yield Rejected(f"{where} (message {node.get('id')})", f"create_time: {exc}")
                continue
            if ts is None:
                yield Rejected(f"{where} (message {node.get('id')})", "create_time: missing (and the conversation's too)")
                continue
            yield from _message(exchanges, calls, message, ts, f"{where} (message {message.get('id') or node.get('id')})")
        yield from exchanges.flush()


def _branch(conversation: Any) -> list[dict[str, Any]]:
    """The nodes of the conversation's current branch, root first."""
    if not isinstance(conversation, dict):
        raise ValueError("expected a conversation object")
    if not (conversation.get("conversation_id") or conversation.get("id")):
        raise ValueError("conversation: no id (conversation_id)")
    mapping = conversation.get("mapping")
    if not isinstance(mapping, dict) or not mapping:
        raise ValueError("mapping: missing or empty")
    node_id = conversation.get("current_node")
    if node_id not in mapping:  # no current node: the newest leaf
        leaves = [n for n in mapping.values() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            raise ValueError("mapping: no leaf node")
        node_id = max(leaves, key=lambda n: ((n.get("message") or {}).get("create_time") or 0))["id"]
    branch: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None:
        node = mapping.get(node_id)
        if not isinstance(node, dict) or node_id in seen:
            raise ValueError(f"mapping: node {node_id!r} is missing or in a cycle")
        seen.add(node_id)
        branch.append(node)
        node_id = node.get("parent")
    return branch[::-1]


def _message(exchanges: Exchanges, calls: dict[str, str], message: dict[str, Any], ts: Any,
             where: str) -> Iterator[Message | Rejected]:
    role = (message.get("author") or {}).get("role")
    content = message.get("content") or {}
    kind = content.get("content_type")
    metadata = message.get("metadata") or {}
    if role not in ("user", "assistant", "tool") or kind in SKIPPED_CONTENT \
            or metadata.get("is_visually_hidden_from_conversation"):
        return
    message_id = message.get("id")
    if role == "tool":
        tool = str((message.get("author") or {}).get("name") or "tool")
        exchanges.result(calls.get(tool, f"{tool}:{message_id}"), _text(content))
        return
    if role == "assistant" and (kind == "code" or message.get("recipient") not in (None, "all")):
        tool = str(message.get("recipient") or "tool")
        calls[tool] = f"{tool}:{message_id}"
        exchanges.call(calls[tool], tool, _text(content), ts, where)
        return
    text = _text(content)
    if role == "user":
        yield from exchanges.prompt(text, ts, where, message_id, _images(content))
    else:
        exchanges.answer(text, ts, where, message_id)


def _text(content: dict[str, Any]) -> str:
    if isinstance(content.get("parts"), list):
        return "\n".join(p for p in content["parts"] if isinstance(p, str) and p.strip())
    return plain_text(content.get("text") if "text" in content else content.get("result"))


def _images(content: dict[str, Any]) -> list[Attachment]:
    """The images a prompt shared (asset parts of `multimodal_text`), by their asset pointer."""
    found = []
    for part in content.get("parts") or []:
        if isinstance(part, dict) and part.get("content_type") == "image_asset_pointer":
            size = f" ({part.get('width')}x{part.get('height')})" if part.get("width") else ""
            found.append(Attachment(kind="image", caption=f"an image shared in ChatGPT{size}",
                                    url=part.get("asset_pointer") or None))
    return found[:16]
