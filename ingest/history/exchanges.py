"""What every history format becomes: a session of exchanges, a prompt and its answer.

A reader feeds an `Exchanges` the events of one session in order: a prompt, the answer's text
(an agent answers in several messages between two prompts: they make one answer), its tool calls
and their results. It yields the turns as `Message`s: the prompt as a user turn, the answer's texts
joined as one assistant turn, with each tool call and its result as an attachment of the answer
(kind `tool_call`), or nothing of the tools when they are left out. An answer with no text (an
interrupted one: only tool calls) is no turn. Also here: times and JSON text read with their
line numbers, for the readers' file:line reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator

from pydantic import ValidationError

from kg.core.models.turns import ATTACHMENT_CAPTION_MAX_CHARS, ATTACHMENTS_MAX, Attachment, Message

from ..loaders import Rejected, explain

CALL_CHARS = 600  # of a tool call's input, in its attachment's caption; the result gets the rest


@dataclass
class ToolCall:
    name: str
    input: str
    result: str | None = None
    failed: bool = False

    def caption(self) -> str:
        call = _cut(f"{self.name} {self.input}".strip(), CALL_CHARS)
        if self.result is None:
            return call
        arrow = " -> error: " if self.failed else " -> "
        return call + arrow + _cut(self.result, ATTACHMENT_CAPTION_MAX_CHARS - len(call) - len(arrow))


@dataclass
class _Answer:
    ts: datetime
    external_id: str | None
    where: str
    texts: list[str] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)


class Exchanges:
    """The turns of one session, built from its events (see the module's docstring)."""

    def __init__(self, namespace: str, session_id: str, tools: bool = True) -> None:
        self.namespace, self.session_id, self.tools = namespace, session_id, tools
        self._answer: _Answer | None = None

    def prompt(self, text: str, ts: datetime, where: str, external_id: str | None = None,
               attachments: list[Attachment] | None = None) -> Iterator[Message | Rejected]:
        """A user's prompt: it ends the answer before it."""
        yield from self.flush()
        yield from self._message("user", text, ts, where, external_id, attachments or [])

    def answer(self, text: str, ts: datetime, where: str, external_id: str | None = None) -> None:
        self._open(ts, where, external_id).texts.append(text)

    def call(self, call_id: str, name: str, arguments: Any, ts: datetime, where: str) -> None:
        """A tool call of the answer (`arguments`: its input, JSON-encoded here unless a string)."""
        if self.tools:
            shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, sort_keys=True)
            self._open(ts, where, None).calls[call_id] = ToolCall(name or "tool", shown)

    def result(self, call_id: str, content: Any, failed: bool = False) -> None:
        """The result of a tool call (matched by its id; a result without its call is kept alone)."""
        if not self.tools or self._answer is None:
            return
        call = self._answer.calls.setdefault(call_id, ToolCall("tool result", ""))
        call.result, call.failed = plain_text(content), failed

    def flush(self) -> Iterator[Message | Rejected]:
        """The answer so far as a turn (at the end of the session, or before a prompt)."""
        answer, self._answer = self._answer, None
        if answer is None:
            return
        text = "\n\n".join(t for t in answer.texts if t.strip())
        if not text.strip():
            return
        yield from self._message("assistant", text, answer.ts, answer.where, answer.external_id,
                                 _attachments(list(answer.calls.values())))

    def _open(self, ts: datetime, where: str, external_id: str | None) -> _Answer:
        if self._answer is None:
            self._answer = _Answer(ts, external_id, where)
        elif self._answer.external_id is None:
            self._answer.external_id = external_id
        return self._answer

    def _message(self, role: str, text: str, ts: datetime, where: str, external_id: str | None,
                 attachments: list[Attachment]) -> Iterator[Message | Rejected]:
        try:
            yield Message(namespace=self.namespace, session_id=self.session_id, role=role, text=text, ts=ts,
                          external_id=external_id, attachments=attachments)
        except ValidationError as exc:
            yield Rejected(where, explain(exc))


def _attachments(calls: list[ToolCall]) -> list[Attachment]:
    if len(calls) > ATTACHMENTS_MAX:  # the last one counts the rest
        rest = calls[ATTACHMENTS_MAX - 1:]
        names = ", ".join(sorted({c.name for c in rest}))
        calls = calls[:ATTACHMENTS_MAX - 1] + [ToolCall(f"{len(rest)} more tool calls:", names)]
    return [Attachment(kind="tool_call", caption=c.caption()) for c in calls if c.caption().strip()]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(limit - 1, 0)] + "…"


def plain_text(content: Any) -> str:
    """The text of a message content in the usual shapes: a string, or a list of parts
    ({"type": "text", "text": ...}, nested `content`, plain strings); other parts are left out."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
        return plain_text(content.get("content"))
    if isinstance(content, list):
        return "\n".join(t for t in (plain_text(part) for part in content) if t)
    return str(content)


# -- times and lines ----------------------------------------------------------------------------
def instant(value: Any) -> datetime | None:
    """An ISO 8601 string or a Unix time in seconds (ChatGPT's `create_time`) as UTC; None if absent."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, timezone.utc)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)
    raise ValueError(f"not a time: {value!r}")


def json_elements(data: bytes, name: str) -> Iterator[tuple[str, Any] | Rejected]:
    """(file:line, element) of each element of a JSON array, with the line it starts on; a JSON
    object is one element. Where the JSON breaks, a `Rejected` names line and column, and the
    elements before it stand."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield Rejected(f"{name}:{data.count(NEWLINE, 0, exc.start) + 1}", f"not valid UTF-8 (byte {exc.start})")
        return
    lines = _Lines(text)
    decoder = json.JSONDecoder()

    def element(at: int) -> tuple[str, Any, int] | Rejected:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            return Rejected(f"{name}:{exc.lineno}", f"malformed JSON: {exc.msg} (column {exc.colno})")
        return f"{name}:{lines.at(at)}", value, end

    start = _skip(text, 0)
    if start < len(text) and text[start] != "[":
        found = element(start)
        yield found if isinstance(found, Rejected) else found[:2]
        return
    at = _skip(text, start + 1)
    while at < len(text) and text[at] != "]":
        found = element(at)
        if isinstance(found, Rejected):
            yield found
            return
        yield found[:2]
        at = _skip(text, found[2])
        if at < len(text) and text[at] == ",":
            at = _skip(text, at + 1)
    if at >= len(text):
        yield Rejected(f"{name}:{lines.at(len(text))}", "malformed JSON: the array is not closed")


NEWLINE = b"\n"


class _Lines:
    """Line numbers of increasing offsets into one text, counted once."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at
