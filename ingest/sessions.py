"""Which session a message belongs to, and the deterministic ids of sessions and turns.

A message without a session id joins the namespace's current session unless the previous
message is more than `gap` older; then it opens a new session named after its own timestamp.
Everything here is a pure function of the messages (plus the last stored turn per namespace),
so re-ingesting the same input yields the same ids and writes nothing new.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from services.models import Message


@dataclass(frozen=True)
class LastTurn:
    """The most recent turn known in a namespace: where the next message may continue."""

    session_id: str
    ts: datetime


def auto_session_id(ts: datetime) -> str:
    millis = f".{ts.microsecond // 1000:03d}" if ts.microsecond >= 1000 else ""
    return "s-" + ts.strftime("%Y%m%dT%H%M%S") + millis + "Z"


class SessionAssigner:
    """Stateful over a stream: remembers the last message per namespace across batches."""

    def __init__(self, gap: timedelta) -> None:
        self.gap = gap
        self.last: dict[str, LastTurn] = {}

    def needs_probe(self, messages: list[Message]) -> dict[str, datetime]:
        """Namespaces whose last stored turn must be looked up, with the time to look before."""
        probes: dict[str, datetime] = {}
        for m in messages:
            if m.session_id is None and m.namespace not in self.last and m.namespace not in probes:
                probes[m.namespace] = m.ts
        return probes

    def seed(self, namespace: str, last: LastTurn | None) -> None:
        if last is not None and namespace not in self.last:
            self.last[namespace] = last

    def assign(self, message: Message) -> str:
        previous = self.last.get(message.namespace)
        if message.session_id is not None:
            session_id = message.session_id
        elif previous is not None and message.ts - previous.ts <= self.gap:
            session_id = previous.session_id
        else:
            session_id = auto_session_id(message.ts)
        if previous is None or message.ts >= previous.ts or message.session_id is not None:
            self.last[message.namespace] = LastTurn(session_id, message.ts)
        return session_id


class TurnIds:
    """Content-derived turn ids; a repeat of the same message in one input gets `#n`."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self.last_id: str | None = None

    def next(self, message: Message, session_id: str) -> str:
        parts = [message.namespace, session_id, message.ts.isoformat(), message.role, message.speaker or "", message.text]
        if message.attachments:  # only then: turns without attachments keep the ids they always had
            parts.append(json.dumps([a.model_dump() for a in message.attachments], ensure_ascii=False))
        key = "\x1f".join(parts)
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
        count = self._seen.get(digest, 0)
        self._seen[digest] = count + 1
        self.last_id = f"t-{digest}" if count == 0 else f"t-{digest}#{count}"
        return self.last_id
