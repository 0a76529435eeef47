"""What the framework doors share: calling the facade from a framework's sync or async code, and a
framework's conversation kept as one kg session.

`MemoryCalls(memory)` runs facade coroutines for a door: over a `Memory`, on its private loop, from
any thread, for sync callers (`run`) and async ones (`arun`: awaited from the caller's own loop);
over an `AsyncMemory`, awaited in the caller's loop (`arun`; a sync call is refused, naming the fix).

`found_elsewhere(calls, namespace, query, k, session_id)` (and `afound_elsewhere`) is a door's memory
tool: the best turns of the namespace's other sessions, one line each.

`History(memory, namespace, session_id, entry, message)` is that list in the framework's own message
type, converted by the door's `entry` and `message`.

`Conversation(memory, namespace, session_id)` is a framework's message list as the turns of one
session, with each call sync and async. Each message is one turn: its role, its readable text (what search, summaries and
extraction read) and `verbatim`, the framework's own JSON of it, so the door hands back exactly what
it was given (tool calls, ids, parts). Appended messages get the time of the append (one microsecond
apart, never before the session's last turn, so they keep their order); `pop` and `clear` go through
`erase_session` (docs/forgetting.md), so they leave a content-free erasure record.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Generic, Sequence, TypeVar, cast

from kg.core.models.recall import RankedTurn
from kg.core.models.turns import Message, Role, Turn
from kg.core.vocabulary import K_MAX

if TYPE_CHECKING:
    from kg.memory import AsyncMemory, Memory

R = TypeVar("R")
M = TypeVar("M")
TICK = timedelta(microseconds=1)


class MemoryCalls:
    """Where a door's calls to the facade run (see the module's docstring)."""

    def __init__(self, memory: Memory | AsyncMemory) -> None:
        self._sync = cast("Memory", memory) if hasattr(memory, "_run") else None
        self.memory: AsyncMemory = self._sync._async if self._sync is not None else cast("AsyncMemory", memory)

    def run(self, work: Callable[[AsyncMemory], Awaitable[R]]) -> R:
        """Run `work(memory)` to its end, from synchronous code."""
        if self._sync is None:
            raise TypeError("a door over an AsyncMemory serves the async calls only; give it a Memory "
                            "(`with Memory() as memory: ...`) for the sync ones")
        return self._sync._run(work(self.memory))

    async def arun(self, work: Callable[[AsyncMemory], Awaitable[R]]) -> R:
        """Await `work(memory)` from the caller's event loop."""
        if self._sync is None:
            return await work(self.memory)
        coro = cast("Any", work(self.memory))
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._sync._loop))


async def search_elsewhere(memory: AsyncMemory, namespace: str, query: str, k: int,
                           session_id: str | None = None) -> list[RankedTurn]:
    """The best `k` turns of `namespace` for `query` (`search_turns`), none of session `session_id`:
    an agent's own session is in its context already. Asks for as many more as that session has
    turns (at most `K_MAX` in all), so its turns do not crowd the others out."""
    own = await memory.session(namespace, session_id) if session_id else None
    hits = await memory.search_turns(namespace, query, min(k + (own.message_count if own else 0), K_MAX))
    return [h for h in hits if h.turn.session_id != session_id][:k]


def lines(hits: Sequence[RankedTurn]) -> list[str]:
    """Found turns as an agent reads them: `date speaker-or-role: text`."""
    return [f"{h.turn.ts:%Y-%m-%d} {h.turn.speaker or h.turn.role}: {h.turn.text}" for h in hits]


def found_elsewhere(calls: MemoryCalls, namespace: str, query: str, k: int,
                    session_id: str | None = None) -> list[str]:
    """A door's memory tool from synchronous code: `search_elsewhere`, as `lines`."""
    return lines(calls.run(lambda memory: search_elsewhere(memory, namespace, query, k, session_id)))


async def afound_elsewhere(calls: MemoryCalls, namespace: str, query: str, k: int,
                           session_id: str | None = None) -> list[str]:
    """`found_elsewhere` from async code."""
    return lines(await calls.arun(lambda memory: search_elsewhere(memory, namespace, query, k, session_id)))


@dataclass(frozen=True)
class Entry:
    """One framework message as a turn: `text` is what the memory reads, `verbatim` what the framework
    gets back; `speaker` a name the framework gave (an agent's, a tool's)."""

    role: Role
    text: str
    verbatim: str | None = None
    speaker: str | None = None
    external_id: str | None = None


def readable(*parts: str | None, fallback: str) -> str:
    """The non-blank parts joined by blank lines, or `fallback`: a turn's text is never blank."""
    text = "\n\n".join(p.strip() for p in parts if p and p.strip())
    return text or fallback


class Conversation:
    """A framework's message list as one kg session (see the module's docstring): each call in a
    sync form (`turns`, `append`, `pop`, `clear`) and an async one (`aturns`, ...), run by `MemoryCalls`."""

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, session_id: str) -> None:
        self.calls = MemoryCalls(memory)
        self.memory = self.calls.memory
        self.namespace = namespace
        self.session_id = session_id

    def turns(self, limit: int | None = None) -> list[Turn]:
        """The session's turns in order; with `limit`, the last `limit` of them."""
        return self.calls.run(lambda _: self._turns(limit))

    async def aturns(self, limit: int | None = None) -> list[Turn]:
        return await self.calls.arun(lambda _: self._turns(limit))

    def append(self, entries: Sequence[Entry]) -> None:
        self.calls.run(lambda _: self._append(entries))

    async def aappend(self, entries: Sequence[Entry]) -> None:
        await self.calls.arun(lambda _: self._append(entries))

    def pop(self) -> Turn | None:
        """Remove the last turn and return it: the session is erased and written again without it
        (the same turn ids), since a turn alone is not erased."""
        return self.calls.run(lambda _: self._pop())

    async def apop(self) -> Turn | None:
        return await self.calls.arun(lambda _: self._pop())

    def clear(self) -> None:
        self.calls.run(lambda _: self._clear())

    async def aclear(self) -> None:
        await self.calls.arun(lambda _: self._clear())

    # -- on the memory's loop ---------------------------------------------------------------------------
    async def _turns(self, limit: int | None) -> list[Turn]:
        turns = await self.memory.turns(self.namespace, self.session_id)
        if limit is None:
            return turns
        return turns[max(len(turns) - limit, 0):] if limit > 0 else []

    async def _append(self, entries: Sequence[Entry]) -> None:
        if not entries:
            return
        start = datetime.now(timezone.utc)
        session = await self.memory.session(self.namespace, self.session_id)
        if session is not None and session.ended_at >= start:
            start = session.ended_at + TICK
        messages = [Message(namespace=self.namespace, session_id=self.session_id, role=e.role, text=e.text,
                            ts=start + i * TICK, speaker=e.speaker, external_id=e.external_id, verbatim=e.verbatim)
                    for i, e in enumerate(entries)]
        report = await self.memory.ingest(messages)
        if report.rejected:
            raise ValueError(f"session {self.session_id!r}: {'; '.join(report.rejected)}")

    async def _pop(self) -> Turn | None:
        turns = await self.memory.turns(self.namespace, self.session_id)
        if not turns:
            return None
        *kept, last = turns
        await self.memory.erase_session(self.namespace, self.session_id)
        if kept:
            await self.memory.ingest(Message(namespace=self.namespace, session_id=self.session_id, role=t.role,
                                             text=t.text, ts=t.ts, speaker=t.speaker, external_id=t.external_id,
                                             attachments=t.attachments, verbatim=t.verbatim) for t in kept)
        return last

    async def _clear(self) -> None:
        try:
            await self.memory.erase_session(self.namespace, self.session_id)
        except KeyError:  # nothing stored yet
            pass


class History(Generic[M]):
    """A framework's message list as one kg session, in the framework's own message type `M`:
    `entry` makes a turn of a message, `message` a message of a turn (see the module's docstring)."""

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, session_id: str,
                 entry: Callable[[M], Entry], message: Callable[[Turn], M]) -> None:
        self.conversation = Conversation(memory, namespace, session_id)
        self._entry = entry
        self._message = message

    def messages(self, limit: int | None = None) -> list[M]:
        """The messages in order; with `limit`, the last `limit` of them."""
        return [self._message(t) for t in self.conversation.turns(limit)]

    async def amessages(self, limit: int | None = None) -> list[M]:
        return [self._message(t) for t in await self.conversation.aturns(limit)]

    def add(self, messages: Sequence[M]) -> None:
        self.conversation.append([self._entry(m) for m in messages])

    async def aadd(self, messages: Sequence[M]) -> None:
        await self.conversation.aappend([self._entry(m) for m in messages])

    def clear(self) -> None:
        self.conversation.clear()

    async def aclear(self) -> None:
        await self.conversation.aclear()
