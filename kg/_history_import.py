"""Imports of a user's existing history (docs/import.md), behind `AsyncMemory.import_claude_code`,
`import_chatgpt` and `import_messages`: Claude Code's transcripts, ChatGPT's export, OpenAI and
Anthropic message lists. The readers are `kg.ingest.history`; the turns go through the one ingest
path, so a re-import writes nothing new. The CLI's `kg import claude-code | chatgpt | messages` and
the HTTP route `POST .../import/{format}` call these. A source is a file's path (for Claude Code,
also a project folder of session files) or its bytes (what the HTTP route receives)."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator

from kg.core.models.turns import IngestReport, Message, check_namespace
from kg.ingest.history.chatgpt import read_chatgpt
from kg.ingest.history.claude_code import read_claude_code, session_files
from kg.ingest.history.messages import FORMATS, Format, read_messages
from kg.ingest.loaders import Rejected, messages_only
from kg.ingest.turns import TurnWriter

Item = Message | Rejected


def claude_code(namespace: str, source: str | os.PathLike[str] | bytes, tools: bool = True,
                session_id: str | None = None) -> Iterator[Item]:
    """Claude Code transcripts: a session file, a project folder of them, or one file's bytes."""
    check_namespace(namespace)
    if isinstance(source, bytes):
        return read_claude_code(source, "body", namespace, tools, session_id)
    files = session_files(_existing(source))
    return (item for f in files for item in
            read_claude_code(f.read_bytes(), str(f), namespace, tools, session_id or f.stem))


def chatgpt(namespace: str, source: str | os.PathLike[str] | bytes, tools: bool = True) -> Iterator[Item]:
    """ChatGPT's `conversations.json`: a session per conversation."""
    check_namespace(namespace)
    data, name = _read(source, "body")
    return read_chatgpt(data, name, namespace, tools)


def messages(namespace: str, source: str | os.PathLike[str] | bytes, format: Format,
             session_id: str | None = None, start: datetime | None = None, tools: bool = True) -> Iterator[Item]:
    """Message lists in OpenAI's or Anthropic's shape; `start` defaults to a file's modification time."""
    check_namespace(namespace)
    if format not in FORMATS:
        raise ValueError(f"format: {format!r} is not one of {', '.join(FORMATS)}")
    data, name = _read(source, "body")
    if start is None and not isinstance(source, bytes):
        start = datetime.fromtimestamp(os.stat(source).st_mtime, timezone.utc)
    sid = session_id or (Path(name).stem if not isinstance(source, bytes) else None)
    if not sid:
        raise ValueError("session_id: required for messages sent as bytes")
    return read_messages(data, name, namespace, format, sid, start, tools)


async def write(writer: TurnWriter, items: Iterable[Item]) -> IngestReport:
    """The messages through the one ingest path (`writer`, the facade's); the rejected lines in the report."""
    rejected: list[str] = []
    report = await writer.write(messages_only(items, rejected))
    report.rejected.extend(rejected)
    return report


def _existing(source: str | os.PathLike[str]) -> Path:
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"source: {path} does not exist")
    return path


def _read(source: str | os.PathLike[str] | bytes, name: str) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        return source, name
    path = _existing(source)
    if path.is_dir():
        raise IsADirectoryError(f"source: {path} is a folder; give the file")
    return path.read_bytes(), str(path)
