"""`AsyncClient`'s forgetting (a session, a turn, a subject, the namespace) and review of what changed (docs/trust.md), over the HTTP
routes of `kg.http.erase` and `kg.http.review`: the same names, arguments and models as
`AsyncMemory`'s. A mixin of `AsyncClient`, which provides `_call` and `_ns`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping
from urllib.parse import quote

from kg.core.models.trust import ChangeResult, Changes, Explanation
from kg.core.models.turns import Erasure


class ReviewCalls:
    async def _call(self, method: str, path: str, answer: Any = None, *, json: Any = None,
                    params: Mapping[str, Any] | None = None, missing: Any = None) -> Any:
        raise NotImplementedError  # AsyncClient's

    @staticmethod
    def _ns(namespace: str, path: str = "") -> str:
        raise NotImplementedError  # AsyncClient's

    async def erase_session(self, namespace: str, session_id: str) -> Erasure:
        return await self._call("DELETE", self._ns(namespace, f"/sessions/{quote(session_id, safe='')}"), Erasure)

    async def erase_subject(self, namespace: str, subject: str) -> Erasure:
        return await self._call("DELETE", self._ns(namespace, f"/subjects/{quote(subject, safe='')}"), Erasure)

    async def erase_namespace(self, namespace: str) -> Erasure:
        return await self._call("DELETE", self._ns(namespace), Erasure)

    async def erase_turn(self, namespace: str, turn_id: str) -> Erasure:
        return await self._call("DELETE", self._ns(namespace, f"/turns/{quote(turn_id, safe='')}"), Erasure)

    async def explain(self, namespace: str, id: str) -> Explanation:
        """A fact (`fact_...`) or relationship (`rel_...`) version and the chain of events behind it."""
        kind = "relationships" if id.startswith("rel_") else "facts"
        return await self._call("GET", self._ns(namespace, f"/{kind}/{quote(id, safe='')}/why"), Explanation)

    async def changes(self, namespace: str, since: datetime | None = None, limit: int = 100) -> Changes:
        params = {"limit": limit, **({"since": since.isoformat()} if since is not None else {})}
        return await self._call("GET", self._ns(namespace, "/changes"), Changes, params=params)

    async def revert(self, namespace: str, event_id: str) -> ChangeResult:
        return await self._call("POST", self._ns(namespace, f"/changes/{quote(event_id, safe='')}/revert"),
                                ChangeResult)

    async def confirm(self, namespace: str, id: str) -> ChangeResult:
        return await self._call("POST", self._ns(namespace, f"/changes/{quote(id, safe='')}/confirm"), ChangeResult)
