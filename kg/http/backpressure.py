"""Backpressure: bounds on in-flight writes and on queued reads per process, and optional per-key
rate limits (`[http]` settings).

Every refusal is decided when the request arrives and answered at once, without touching the
database: 503 (overloaded) or 429 (the key's rate), with `Retry-After`. Under overload, requests
had queued for seconds (`bench.load` saw `POST /messages` at p50 9.6 s), and a bound on the count
alone still let 32 writes of ten messages queue for 15 s on the 2-core machine: how long a
request waits depends on how fast this machine finishes them. So each kind (`Flow`) also learns
its cost, and a request that would, at that rate, finish later than the kind's budget is refused
now rather than held:
- a write is let in while `(writes in flight + 1) x cost <= write_latency_target_s`, and never
  past `max_inflight_writes`; one is always let in when none is in flight. Until a request has
  finished, the cost is the busy time so far, so a burst on a quiet start is bounded too;
- a read takes one of `max_inflight_reads` slots, or waits in a queue of at most
  `max_queued_reads`; it is refused at once when the queue is full or when its predicted wait,
  `(queued + 1) x cost`, exceeds `read_queue_wait_s`, and it never waits longer than that;
- while writes slow reads past their share of `read_slowdown_max`, writes are paced and, past the
  write budget, refused (`kg.http.read_guard`).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from kg.core.settings.tree import HttpSettings
from kg.http.asgi import HttpMiddleware
from kg.http.common import error_response
from kg.http.read_guard import ReadGuard

EXEMPT = frozenset({"/health", "/ready", "/metrics"})  # an orchestrator's probes must answer under load
READS = frozenset({"GET", "HEAD", "OPTIONS"})
# the REST routes the read guard watches and paces; not /mcp, whose tool calls are all POSTs and whose
# GET is a stream that lasts as long as the client keeps it; nor an export's stream, a bulk read
GUARDED = "/v1/"
BULK_READS = ("/export",)
SMOOTHING = 0.2  # weight of the newest sample in a flow's cost


def _guarded(path: str) -> bool:
    """A REST route the read guard watches and paces (not a bulk read's stream)."""
    return path.startswith(GUARDED) and not path.endswith(BULK_READS)


class Flow:
    """Requests of one kind in this process: how many are in flight, and what one costs: the busy
    time (time with at least one in flight) per request finished, smoothed. Under saturation that
    is 1 / throughput, whatever the concurrency; when requests do not overlap, their duration. So
    `(n + 1) x cost` predicts when a request let in behind `n` others would finish."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.inflight = 0
        self.cost = 0.0  # seconds; 0 until a request has finished
        self._busy = 0.0
        self._at = clock()

    def enter(self) -> None:
        self._tick()
        self.inflight += 1

    def leave(self) -> None:
        self._tick()
        self.inflight -= 1
        sample, self._busy = self._busy, 0.0
        self.cost = sample if not self.cost else self.cost + SMOOTHING * (sample - self.cost)

    def predicted_s(self, ahead: int) -> float:
        """When a request with `ahead` requests before it would finish, at the learned cost, or at
        the busy time since the last one finished when that is longer: before the first request
        finishes, and when the machine slows down, the smoothed cost alone would let a burst in."""
        open_s = self._busy + (self.clock() - self._at if self.inflight else 0.0)
        return (ahead + 1) * max(self.cost, open_s)

    def _tick(self) -> None:
        now = self.clock()
        if self.inflight:
            self._busy += now - self._at
        self._at = now


class Backpressure(HttpMiddleware):
    def __init__(self, app: ASGIApp, settings: HttpSettings, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(app)
        self.settings = settings
        self.clock = clock
        self.writes = Flow(clock)
        self.reads = Flow(clock)
        self.queued = 0
        self._slots: asyncio.Semaphore | None = None  # made on first use: inside the serving loop
        self._buckets: dict[str, tuple[float, float]] = {}  # key digest -> (tokens, at)
        self.guard = ReadGuard(settings.read_slowdown_max, settings.max_inflight_writes, clock)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] in EXEMPT:
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
        bound, target, flow = self.settings.max_inflight_writes, self.settings.write_latency_target_s, self.writes
        if bound and flow.inflight >= bound:
            await self._refuse(scope, send, 503, "overloaded",
                               f"{bound} writes are in flight ([http] max_inflight_writes); retry later")
            return
        if target and flow.inflight and flow.predicted_s(flow.inflight) > target:
            await self._refuse(scope, send, 503, "overloaded",
                               f"the {flow.inflight} writes in flight would hold this one past "
                               f"{target:g} s ([http] write_latency_target_s); retry later")
            return
        if not _guarded(scope["path"]):
            await self._served(flow, scope, receive, send)
            return
        wait_s = self.guard.wait_s(max(0.0, (target or 1.0) - self.guard.write_s), flow.inflight)
        if wait_s is None:
            await self._refuse(scope, send, 503, "overloaded",
                               "writes are paced while they slow reads down past "
                               f"{self.settings.read_slowdown_max:g}x their time alone ([http] read_slowdown_max); "
                               "retry later")
            return
        if wait_s:
            await asyncio.sleep(wait_s)
        self.guard.write_started()
        started = self.clock()
        try:
            await self._served(flow, scope, receive, send)
        finally:
            self.guard.write_done(self.clock() - started)

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> None:
        bound = self.settings.max_inflight_reads
        if not bound:
            await self._guarded_read(scope, receive, send)
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(bound)
        if self._slots.locked():
            wait_s = self.settings.read_queue_wait_s
            if self.queued >= self.settings.max_queued_reads:
                await self._refuse(scope, send, 503, "overloaded",
                                   f"{self.queued} reads are queued ([http] max_queued_reads); retry later")
                return
            if self.reads.predicted_s(self.queued) > wait_s:
                await self._refuse(scope, send, 503, "overloaded",
                                   f"the {self.queued} reads queued would hold this one past {wait_s:g} s "
                                   "([http] read_queue_wait_s); retry later")
                return
            self.queued += 1
            try:
                await asyncio.wait_for(self._slots.acquire(), wait_s)
            except asyncio.TimeoutError:
                await self._refuse(scope, send, 503, "overloaded",
                                   f"no read slot within {wait_s:g} s ([http] read_queue_wait_s); retry later")
                return
            finally:
                self.queued -= 1
        else:
            await self._slots.acquire()
        try:
            await self._guarded_read(scope, receive, send)
        finally:
            self._slots.release()

    async def _guarded_read(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _guarded(scope["path"]):
            await self._served(self.reads, scope, receive, send)
            return
        token, started = self.guard.read_started(self.writes.inflight), self.clock()
        try:
            await self._served(self.reads, scope, receive, send)
        finally:
            self.guard.read_done(scope["path"], self.clock() - started, token, self.writes.inflight)

    async def _served(self, flow: Flow, scope: Scope, receive: Receive, send: Send) -> None:
        flow.enter()
        try:
            await self.app(scope, receive, send)
        finally:
            flow.leave()

    def _take_token(self, scope: Scope) -> bool:
        """A token bucket per key (its digest: the key itself is not kept), or per client address
        when no key is sent."""
        headers = dict(scope["headers"])
        key = headers.get(b"x-api-key")
        if key is not None:
            who = hashlib.sha256(key).hexdigest()
        else:
            who = "addr:" + (scope["client"][0] if scope.get("client") else "-")
        now = self.clock()
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
