"""Which session a message belongs to, and the deterministic ids of sessions and turns.

A message without a session id joins the namespace's current session unless the previous
message is more than `gap` older; then it opens a new session named after its own timestamp.
Everything here is a pure function of the messages (plus the last stored turn per namespace),
so re-ingesting the same input yields the same ids and writes nothing new.

Automatic sessions are the runs of messages no more than `gap` apart, each named after its first
message (`auto_session_id`), whatever order the messages arrive in: `runs` re-segments the stored
automatic sessions near a batch with the batch's messages, so a late earlier message extends a
session backwards (renaming it) and a message that closes a gap joins two sessions into one.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Sequence

from kg.core.models.turns import Message


@dataclass(frozen=True)
class LastTurn:
    """The most recent turn known in a namespace: where the next message may continue."""

    session_id: str
    ts: datetime


AUTO_SESSION = re.compile(r"s-[0-9]{8}T[0-9]{6}(\.[0-9]{3})?Z")  # also in sessions/auto_near


def auto_session_id(ts: datetime) -> str:
    millis = f".{ts.microsecond // 1000:03d}" if ts.microsecond >= 1000 else ""
    return "s-" + ts.strftime("%Y%m%dT%H%M%S") + millis + "Z"


def is_auto(session_id: str) -> bool:
    """Named like an automatic session (a caller's own id of that exact form counts as one too)."""
    return AUTO_SESSION.fullmatch(session_id) is not None


@dataclass
class Run:
    """Messages and stored sessions no more than the gap apart: one automatic session, `target`."""

    start: datetime
    end: datetime
    stored: list[str]
    new: bool = False  # holds a message of the batch

    @property
    def target(self) -> str:
        return auto_session_id(self.start)


def runs(stored: Sequence[tuple[str, datetime, datetime]], points: Sequence[datetime], gap: timedelta) -> list[Run]:
    """The automatic sessions that `stored` (id, started_at, ended_at) and the new messages at
    `points` make together: spans sorted by start, joined while the next starts within `gap` of
    the run's end. Only runs holding a new message are returned."""
    items = sorted([(start, end, id) for id, start, end in stored] + [(ts, ts, None) for ts in points],
                   key=lambda item: (item[0], item[1]))
    found: list[Run] = []
    for start, end, id in items:
        if found and start - found[-1].end <= gap:
            run = found[-1]
            run.end = max(run.end, end)
        else:
            run = Run(start, end, [])
            found.append(run)
        if id is None:
            run.new = True
        else:
            run.stored.append(id)
    return [run for run in found if run.new]


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
    """Content-derived turn ids: the same message has the same id however it arrives (alone, in a
    batch, repeated in a batch, sent again), so a repeat is the turn already written, never a
    second one (docs/reliability.md, "Identity"). Ids `t-...#1`, `t-...#2` that earlier versions
    gave to repeats inside one batch stay as stored; re-sending that batch writes nothing."""

    def __init__(self) -> None:
        self.last_id: str | None = None

    def next(self, message: Message, session_id: str) -> str:
        """A message without a session id is one turn whichever automatic session it lands in: its
        id leaves the session out (a later message can move it to another, see `runs`)."""
        session = session_id if message.session_id is not None else ""
        parts = [message.namespace, session, message.ts.isoformat(), message.role, message.speaker or "", message.text]
        if message.attachments:  # only then: turns without attachments keep the ids they always had
            parts.append(json.dumps([a.model_dump() for a in message.attachments], ensure_ascii=False))
        key = "\x1f".join(parts)
        self.last_id = "t-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
        return self.last_id
