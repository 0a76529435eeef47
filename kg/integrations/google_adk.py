"""Google ADK's memory service over the memory (`pip install 'kg-memory[google-adk]'`).

    runner = Runner(agent=agent, app_name="shop", session_service=sessions,
                    memory_service=KgMemoryService(memory))
    await runner.memory_service.add_session_to_memory(session)     # after (or during) a session

`KgMemoryService` is a `BaseMemoryService`. Each (app, user) is a kg namespace, `"{app}:{user}"`
unless `namespace_of` says otherwise. `add_session_to_memory` stores the session's events that
have text as the turns of the kg session of the same id (the user's events as user turns, every
other author's as assistant turns with the author as the speaker, the event's time and id kept); adding
a session again writes only its new events (a turn's identity is its time, role, speaker and text).
`add_events_to_memory` does the same for some events. `search_memory` returns the turns the
memory's retriever ranks best (`search_turns`), at most `k`, as `MemoryEntry`s with their author and
time, what ADK's `load_memory` and `preload_memory` tools show the model. Summaries, extraction and
facts follow when the session is closed or idle (`kg serve`, docs/operations.md).
`memory` is a `Memory` or an `AsyncMemory` (ADK's calls are async).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from kg.core.extras import require

require("google-adk", "google.adk")

from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from kg.core.models.recall import RankedTurn
from kg.core.models.turns import Message
from kg.integrations.conversation import MemoryCalls

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

    from kg.memory import AsyncMemory, Memory


def app_user(app_name: str, user_id: str) -> str:
    """The default `namespace_of`: one kg namespace per app and user, `app_name:user_id`."""
    return f"{app_name}:{user_id}"


class KgMemoryService(BaseMemoryService):
    """ADK's `BaseMemoryService` over kg-memory (see the module's docstring)."""

    def __init__(self, memory: Memory | AsyncMemory, k: int = 5,
                 namespace_of: Callable[[str, str], str] = app_user) -> None:
        self.calls = MemoryCalls(memory)
        self.k = k
        self.namespace_of = namespace_of

    async def add_session_to_memory(self, session: Session) -> None:
        await self._add(self.namespace_of(session.app_name, session.user_id), session.events, session.id)

    async def add_events_to_memory(self, *, app_name: str, user_id: str, events: Sequence[Event],
                                   session_id: str | None = None,
                                   custom_metadata: Mapping[str, object] | None = None) -> None:
        """`session_id` None: the namespace's current session, or a new one after the time gap."""
        await self._add(self.namespace_of(app_name, user_id), events, session_id)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        namespace = self.namespace_of(app_name, user_id)
        hits = await self.calls.arun(lambda memory: memory.search_turns(namespace, query, self.k))
        return SearchMemoryResponse(memories=[_entry(h) for h in hits])

    async def _add(self, namespace: str, events: Sequence[Event], session_id: str | None) -> None:
        messages = [m for m in (_message(namespace, e, session_id) for e in events) if m is not None]
        if messages:
            await self.calls.arun(lambda memory: memory.ingest(messages))


def _message(namespace: str, event: Event, session_id: str | None) -> Message | None:
    text = " ".join(p.text for p in (event.content.parts or []) if p.text) if event.content else ""
    if not text.strip():  # function calls and responses, state changes: nothing to remember by text
        return None
    return Message(namespace=namespace, session_id=session_id, role="user" if event.author == "user" else "assistant",
                   text=text, ts=datetime.fromtimestamp(event.timestamp, timezone.utc), speaker=_speaker(event.author),
                   external_id=event.id or None)


def _speaker(author: str) -> str | None:
    """The author as a turn's speaker, but not "user": a role's name in every turn only blurs the search
    (docs/turn-keys.md)."""
    return author if author and author != "user" else None


def _entry(hit: RankedTurn) -> MemoryEntry:
    turn = hit.turn
    metadata: dict[str, Any] = {"session_id": turn.session_id, "score": hit.score}
    return MemoryEntry(id=turn.id, author=turn.speaker or turn.role, timestamp=turn.ts.isoformat(),
                       custom_metadata=metadata,
                       content=types.Content(role="user" if turn.role == "user" else "model",
                                             parts=[types.Part(text=turn.text)]))


__all__ = ["KgMemoryService", "app_user"]
