"""Reads first: writes are paced while they slow reads down (`[http] read_slowdown_max`).

A tenant ingesting as fast as the server takes it used to take the machine from every other
tenant's searches: `bench.load` measured another namespace's search p95 at 4x its idle value
while one namespace's writers ran flat out, although each write stayed within its own latency
budget. Writes can wait (an agent's memory may lag by a second); a search cannot.

So the process watches its reads. Each read that a write overlapped is compared with the same
route's time when none did (learned here, per path, smoothed); a read that no write overlapped
counts as 1. The smoothed ratio is the *pressure*.
While the pressure stays above `TARGET` of the allowed slowdown (`1 + 0.4 x (read_slowdown_max -
1)`: a mean at 1.2x leaves room for the tail to stay within 1.5x), the write rate is halved; while
it stays below, the rate grows back, and at its ceiling (`max_inflight_writes` writes at their
usual duration) pacing stops. A paced write is given a start time one period after the last
one's (period = duration / limit, so a limit under one is a duty cycle) and waits for it; one
whose start would be later than the write budget allows is refused at once (503, Retry-After), as
the other write bounds refuse. With no read in flight and none finished within `QUIET_S`, there
is no reader to protect and writes are not paced.
"""

from __future__ import annotations

import math
import time
from typing import Callable

TARGET = 0.4  # the pressure aimed at: this share of the allowed slowdown above 1
SMOOTHING = 0.2  # weight of the newest read in the pressure
BASELINE_SMOOTHING = 0.1  # weight of the newest undisturbed read in its route's baseline
ADJUST_S = 0.5  # the rate changes at most this often
FLOOR = 0.02  # the lowest limit: writes busy 2% of the time
GROWTH = 0.1  # the limit grows by this share (at least FLOOR) per ADJUST_S below the target
QUIET_S = 1.0  # no read for this long: nothing to protect
MAX_ROUTES = 1024  # baselines kept; the oldest is dropped past it


class ReadGuard:
    """The pacing state of one process: reads report their time, writes ask for a start time."""

    def __init__(self, slowdown_max: float, ceiling: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.slowdown_max = slowdown_max
        self.ceiling = float(ceiling or 64)
        self.limit = self.ceiling  # writes' share of the time, in writes in flight; below 1: a duty cycle
        self.pressure = 1.0  # smoothed read time / the route's undisturbed time
        self.clock = clock
        self.reads_inflight = 0
        self.write_starts = 0  # writes let in so far, to tell whether one started during a read
        self.write_s = 0.0  # a write's smoothed duration
        self._baseline: dict[str, float] = {}
        self._adjusted = clock()
        self._last_read = -math.inf
        self._next_start = -math.inf

    @property
    def on(self) -> bool:
        return self.slowdown_max > 1

    @property
    def target(self) -> float:
        return 1 + TARGET * (self.slowdown_max - 1)

    def read_started(self, writes_inflight: int) -> tuple[int, int]:
        self.reads_inflight += 1
        return writes_inflight, self.write_starts

    def read_done(self, path: str, seconds: float, started: tuple[int, int], writes_inflight: int) -> None:
        self.reads_inflight -= 1
        self._last_read = self.clock()
        undisturbed = not started[0] and started[1] == self.write_starts and not writes_inflight
        base = self._baseline.get(path)
        if undisturbed:
            if base is None and len(self._baseline) >= MAX_ROUTES:
                del self._baseline[next(iter(self._baseline))]
            self._baseline[path] = seconds if base is None else base + BASELINE_SMOOTHING * (seconds - base)
        if base is None or base <= 0:
            return
        # a read no write overlapped was not slowed by writes, however long it took (a cold cache, a
        # larger result): it counts as 1, so that only what writes cost readers paces them
        sample = 1.0 if undisturbed else seconds / base
        self.pressure += SMOOTHING * (sample - self.pressure)
        self._adjust(writes_inflight)

    def write_started(self) -> None:
        self.write_starts += 1

    def write_done(self, seconds: float) -> None:
        self.write_s = seconds if not self.write_s else self.write_s + SMOOTHING * (seconds - self.write_s)

    def wait_s(self, budget_s: float, writes_inflight: int) -> float | None:
        """Seconds until a write may start (its start is then reserved), or None when that would be
        more than `budget_s` from now: refuse it."""
        now = self.clock()
        self._adjust(writes_inflight)
        if not self.on or self.limit >= self.ceiling or not self.write_s or self._quiet(now):
            return 0.0
        start = max(now, self._next_start)
        if start - now > budget_s:
            return None
        self._next_start = start + self.write_s / self.limit
        return start - now

    def _quiet(self, now: float) -> bool:
        return not self.reads_inflight and now - self._last_read > QUIET_S

    def _adjust(self, writes_inflight: int) -> None:
        now = self.clock()
        if now - self._adjusted < ADJUST_S:
            return
        self._adjusted = now
        if self._quiet(now):
            self.pressure, self.limit = 1.0, self.ceiling
        elif self.pressure > self.target:  # halved from what is in use, not from an unused ceiling
            self.limit = max(FLOOR, min(self.limit, max(1, writes_inflight)) / 2)
        else:
            self.limit = min(self.ceiling, self.limit + max(FLOOR, GROWTH * self.limit))
