"""Backpressure: a bound on in-flight writes and on queued reads per process, and optional
per-key rate limits (`[http]` settings).

A write past `max_inflight_writes` is refused at once; a read waits for one of
`max_inflight_reads` slots in a queue of at most `max_queued_reads`, for at most
`read_queue_wait_s`. A refusal is 503 (overloaded) or 429 (the key's rate) with `Retry-After`,
answered without touching the database: under overload, requests had queued for seconds
(`bench.load` saw `POST /messages` at p50 9.6 s) instead of being told when to come back.
"""

from __future__ import annotations

import asyncio
import hashlib
import time

from starlette.types import ASGIApp, Receive, Scope, Send

from kg.core.config import HttpSettings
from kg.http.common import error_response

EXEMPT = frozenset({"/health", "/ready", "/metrics"})  # an orchestrator's probes must answer under load
READS = frozenset({"GET", "HEAD", "OPTIONS"})


class Backpressure:
    def __init__(self, app: ASGIApp, settings: HttpSettings) -> None:
        self.app = app
        self.settings = settings
        self.writes = 0
        self.reads = 0
        self.queued = 0
        self._slots: asyncio.Semaphore | None = None  # made on first use: inside the serving loop
        self._buckets: dict[str, tuple[float, float]] = {}  # key digest -> (tokens, at)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT:
            await self.app(scope, receive, send)
            return
        if self.settings.rate_per_key and not self._take_token(scope):
            await self._refuse(scope, send, 429, "rate_limited",
                               f"this key sends more than {self.settings.rate_per_key:g} requests per second "
                               "([http] rate_per_key)")
            return
        if scope["method"] in READS:
            await self._read(scope, receive, send)
        else:
            await self._write(scope, receive, send)

    async def _write(self, scope: Scope, receive: Receive, send: Send) -> None:
        bound = self.settings.max_inflight_writes
        if bound and self.writes >= bound:
            await self._refuse(scope, send, 503, "overloaded",
                               f"{bound} writes are in flight ([http] max_inflight_writes); retry later")
            return
        self.writes += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.writes -= 1

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> None:
        bound = self.settings.max_inflight_reads
        if not bound:
            await self.app(scope, receive, send)
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(bound)
        if self._slots.locked():
            if self.queued >= self.settings.max_queued_reads:
                await self._refuse(scope, send, 503, "overloaded",
                                   f"{self.queued} reads are queued ([http] max_queued_reads); retry later")
                return
            self.queued += 1
            try:
                await asyncio.wait_for(self._slots.acquire(), self.settings.read_queue_wait_s)
            except asyncio.TimeoutError:
                await self._refuse(scope, send, 503, "overloaded",
                                   f"no read slot within {self.settings.read_queue_wait_s:g} s "
                                   "([http] read_queue_wait_s); retry later")
                return
            finally:
                self.queued -= 1
        else:
            await self._slots.acquire()
        self.reads += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.reads -= 1
            self._slots.release()

    def _take_token(self, scope: Scope) -> bool:
        """A token bucket per key (its digest: the key itself is not kept), or per client address
        when no key is sent."""
        headers = dict(scope["headers"])
        key = headers.get(b"x-api-key")
        if key is not None:
            who = hashlib.sha256(key).hexdigest()
        else:
            who = "addr:" + (scope["client"][0] if scope.get("client") else "-")
        now = time.monotonic()
        burst = float(self.settings.rate_burst)
        tokens, at = self._buckets.get(who, (burst, now))
        tokens = min(burst, tokens + (now - at) * self.settings.rate_per_key)
        if tokens < 1:
            self._buckets[who] = (tokens, now)
            return False
        self._buckets[who] = (tokens - 1, now)
        return True

    async def _refuse(self, scope: Scope, send: Send, status: int, code: str, message: str) -> None:
        response = error_response(status, code, message)
        response.headers["Retry-After"] = str(self.settings.retry_after_s)
        await response(scope, _no_body, send)


async def _no_body() -> dict:
    return {"type": "http.request", "body": b"", "more_body": False}
