"""`AsyncMemory`'s imports of a user's existing history (docs/import.md): Claude Code's transcripts,
ChatGPT's export, OpenAI and Anthropic message lists. The readers are `kg.ingest.history`; the
turns go through the one ingest path, so a re-import writes nothing new. The CLI's `kg import
claude-code | chatgpt | messages` and the HTTP route `POST .../import/{format}` call these."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from kg.core.models.turns import IngestReport, Message, check_namespace
from kg.engine import Engine
from kg.ingest.history.chatgpt import read_chatgpt
from kg.ingest.history.claude_code import read_claude_code, session_files
from kg.ingest.history.messages import FORMATS, Format, read_messages
from kg.ingest.loaders import Rejected, messages_only
from kg.ingest.turns import TurnWriter

class HistoryFacade(Engine):
    """Mixed into `AsyncMemory`. A source is a file's path (for Claude Code, also a project folder of
    session files) or its bytes (what the HTTP route receives)."""

    async def import_claude_code(self, namespace: str, source: str | os.PathLike[str] | bytes, tools: bool = True,
                                 session_id: str | None = None) -> IngestReport:
        """Claude Code transcripts: a session file (`~/.claude/projects/<project>/<id>.jsonl`), a project
        folder of them, or one file's bytes. Each session keeps its id and its times; `tools`: the
        tool calls and their results as attachments of the answers (False: left out). `session_id`:
        for lines that carry none (default: the file's name; bytes need it then). Bad lines are in
        `rejected` (file:line)."""
        check_namespace(namespace)
        if isinstance(source, bytes):
            return await self._import(read_claude_code(source, "body", namespace, tools, session_id))
        files = session_files(_existing(source))
        return await self._import(item for f in files for item in
                                  read_claude_code(f.read_bytes(), str(f), namespace, tools, session_id or f.stem))

    async def import_chatgpt(self, namespace: str, source: str | os.PathLike[str] | bytes,
                             tools: bool = True) -> IngestReport:
        """ChatGPT's `conversations.json` (a data export): a session per conversation, with its id; each
        turn keeps its message's id and time. `tools`: the code it ran and what came back, as
        attachments of the answers. A bad conversation is in `rejected` (file:line) and the rest go in."""
        check_namespace(namespace)
        data, name = _read(source, "body")
        return await self._import(read_chatgpt(data, name, namespace, tools))

    async def import_messages(self, namespace: str, source: str | os.PathLike[str] | bytes, format: Format,
                              session_id: str | None = None, start: datetime | None = None,
                              tools: bool = True) -> IngestReport:
        """Message lists in OpenAI's (`format="openai"`) or Anthropic's (`"anthropic"`) shape: a
        conversation, several, or JSON Lines of them. `session_id`: of a conversation without an id
        of its own (default: the file's name). Messages without a time of their own follow `start`
        (default for a file: its modification time), a second apart."""
        check_namespace(namespace)
        if format not in FORMATS:
            raise ValueError(f"format: {format!r} is not one of {', '.join(FORMATS)}")
        data, name = _read(source, "body")
        if start is None and not isinstance(source, bytes):
            start = datetime.fromtimestamp(os.stat(source).st_mtime, timezone.utc)
        sid = session_id or (Path(name).stem if not isinstance(source, bytes) else None)
        if not sid:
            raise ValueError("session_id: required for messages sent as bytes")
        return await self._import(read_messages(data, name, namespace, format, sid, start, tools))

    async def _import(self, items: Iterable[Message | Rejected]) -> IngestReport:
        rejected: list[str] = []
        messages = messages_only(items, rejected)
        report = await TurnWriter(self.store, self.embedder, self.settings, self.fallback_embedder).write(messages)
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
