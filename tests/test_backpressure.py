"""Backpressure (`kg.http.backpressure`): past the bound on in-flight writes or queued reads, past
the latency a kind's learned cost predicts, or past a key's rate, a request is refused at once
with 503/429 and Retry-After; nothing is dropped silently. Pure: the middleware around a small
app whose handlers say when they are entered and wait until the test releases them, and a clock
the test moves. "At once" is shown by order, not by time: the refusal arrives while the requests
ahead of it are still held."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kg.core.settings.tree import HttpSettings
from kg.http.backpressure import Backpressure, Flow


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Held:
    """The app behind the middleware: each request reports that it entered, then waits for
    `release`; `served` lists the requests that reached it."""

    def __init__(self, clock: Clock | None = None, **limits: Any) -> None:
        self.release = asyncio.Event()
        self.served: list[str] = []
        self._entered = asyncio.Condition()

        async def slow(request: Request) -> JSONResponse:
            async with self._entered:
                self.served.append(request.method)
                self._entered.notify_all()
            await self.release.wait()
            return JSONResponse({"ok": True})

        async def health(_: Request) -> JSONResponse:
            return JSONResponse({"status": "ok"})

        inner = Starlette(routes=[Route("/v1/work", slow, methods=["GET", "POST", "DELETE"]), Route("/health", health)])
        self.middleware = Backpressure(inner, HttpSettings(**limits), clock=clock or Clock())
        self.client = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.middleware), base_url="http://t")

    async def start(self, method: str, n: int = 1) -> list[asyncio.Task[httpx.Response]]:
        """`n` requests sent, returned once all of them are inside the app."""
        want = len(self.served) + n
        tasks = [asyncio.create_task(self.client.request(method, "/v1/work")) for _ in range(n)]
        async with self._entered:
            await self._entered.wait_for(lambda: len(self.served) >= want)
        return tasks


def refused_for(response: httpx.Response, setting: str, retry_after: str = "1") -> bool:
    return (response.status_code == 503 and response.headers["Retry-After"] == retry_after
            and response.json()["error"] == "overloaded" and setting in response.json()["message"])


async def test_writes_past_the_bound_are_refused_at_once_with_retry_after() -> None:
    app = Held(max_inflight_writes=2, write_latency_target_s=0, retry_after_s=3)
    held = await app.start("POST", 2)
    refused = [await app.client.post("/v1/work"), await app.client.delete("/v1/work")]
    assert all(refused_for(r, "max_inflight_writes", "3") for r in refused)
    assert not any(t.done() for t in held)  # answered while the two writes ahead are still held
    assert (await app.client.get("/health")).status_code == 200  # probes are never refused
    app.release.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]
    assert app.served == ["POST", "POST"]  # the refused ones never reached the app
    assert (await app.client.post("/v1/work")).status_code == 200  # a slot is free again


async def test_a_flow_costs_its_duration_alone_and_its_pace_under_saturation() -> None:
    clock = Clock()
    flow = Flow(clock)
    flow.enter()
    clock.now += 0.4
    flow.leave()
    assert abs(flow.cost - 0.4) < 1e-9 and abs(flow.predicted_s(2) - 1.2) < 1e-9
    clock.now += 60  # idle time is not cost
    for _ in range(3):
        flow.enter()
    for _ in range(3):  # three in flight finishing one every 0.2 s: a pace of 0.2 s each
        clock.now += 0.2
        flow.leave()
    assert 0.2 < flow.cost < 0.4 and flow.inflight == 0
    for _ in range(30):
        flow.enter()
        clock.now += 0.2
        flow.leave()
    assert abs(flow.cost - 0.2) < 1e-3


async def test_a_write_the_pace_says_would_finish_past_the_target_is_refused_at_once() -> None:
    clock = Clock()
    app = Held(clock, max_inflight_writes=32, write_latency_target_s=1.0)
    first = await app.start("POST")
    clock.now += 0.6  # one write took 0.6 s
    app.release.set()
    assert (await first[0]).status_code == 200
    app.release.clear()
    ahead = await app.start("POST")  # none in flight: always let in
    refused = await app.client.post("/v1/work")  # behind one: (1 + 1) x 0.6 s > 1 s
    assert refused_for(refused, "write_latency_target_s") and not ahead[0].done()
    app.release.set()
    assert (await ahead[0]).status_code == 200 and app.served == ["POST", "POST"]


async def test_writes_faster_than_the_target_are_let_in_up_to_the_bound() -> None:
    clock = Clock()
    app = Held(clock, max_inflight_writes=4, write_latency_target_s=1.0)
    first = await app.start("POST")
    clock.now += 0.1
    app.release.set()
    await first[0]
    app.release.clear()
    held = await app.start("POST", 4)  # (3 + 1) x 0.1 s <= 1 s
    assert refused_for(await app.client.post("/v1/work"), "max_inflight_writes")
    app.release.set()
    assert {r.status_code for r in await asyncio.gather(*held)} == {200}


async def test_reads_queue_up_to_the_bound_then_are_refused() -> None:
    app = Held(max_inflight_reads=1, max_queued_reads=2, read_queue_wait_s=60)
    running = await app.start("GET")
    queued = [asyncio.create_task(app.client.get("/v1/work")) for _ in range(2)]
    while app.middleware.queued < 2:
        await asyncio.sleep(0)
    refused = await app.client.get("/v1/work")
    assert refused_for(refused, "max_queued_reads") and not running[0].done()
    app.release.set()
    answers = await asyncio.gather(*running, *queued)
    assert [r.status_code for r in answers] == [200, 200, 200] and app.served == ["GET"] * 3


async def test_a_read_whose_predicted_wait_exceeds_read_queue_wait_s_is_refused_at_once() -> None:
    clock = Clock()
    app = Held(clock, max_inflight_reads=1, max_queued_reads=5, read_queue_wait_s=1.0)
    first = await app.start("GET")
    clock.now += 1.5  # a read took 1.5 s: a queued one would wait about as long
    app.release.set()
    await first[0]
    app.release.clear()
    running = await app.start("GET")
    refused = await app.client.get("/v1/work")
    assert refused_for(refused, "read_queue_wait_s") and not running[0].done()
    app.release.set()
    assert (await running[0]).status_code == 200


async def test_a_queued_read_waits_no_longer_than_read_queue_wait_s() -> None:
    app = Held(max_inflight_reads=1, max_queued_reads=5, read_queue_wait_s=0.05)
    running = await app.start("GET")
    refused = await app.client.get("/v1/work")  # queued; the slot is never freed while it waits
    assert refused_for(refused, "read_queue_wait_s") and not running[0].done()
    app.release.set()
    assert (await running[0]).status_code == 200 and app.served == ["GET"]


async def test_writes_do_not_take_read_slots() -> None:
    app = Held(max_inflight_reads=1, max_queued_reads=0, max_inflight_writes=5)
    read = await app.start("GET")
    write = await app.start("POST")
    assert refused_for(await app.client.get("/v1/work"), "max_queued_reads")  # the read bound, not the write one
    app.release.set()
    assert (await read[0]).status_code == 200 and (await write[0]).status_code == 200


async def test_a_key_past_its_rate_gets_429_and_other_keys_do_not() -> None:
    clock = Clock()
    app = Held(clock, rate_per_key=2.0, rate_burst=3)
    app.release.set()
    codes = [(await app.client.get("/v1/work", headers={"X-API-Key": "k1"})).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = await app.client.get("/v1/work", headers={"X-API-Key": "k1"})
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "1"
    assert limited.json()["error"] == "rate_limited" and "rate_per_key" in limited.json()["message"]
    assert (await app.client.get("/v1/work", headers={"X-API-Key": "k2"})).status_code == 200
    clock.now += 0.5  # one token back at 2 per second
    assert (await app.client.get("/v1/work", headers={"X-API-Key": "k1"})).status_code == 200
    assert (await app.client.get("/v1/work", headers={"X-API-Key": "k1"})).status_code == 429


async def test_no_bound_when_set_to_zero() -> None:
    clock = Clock()
    app = Held(clock, max_inflight_writes=0, max_inflight_reads=0, write_latency_target_s=0)
    slow = await app.start("POST")
    clock.now += 30  # even a write this slow does not bound the others
    app.release.set()
    await slow[0]
    app.release.clear()
    held = await app.start("POST", 50) + await app.start("GET", 50)
    app.release.set()
    assert {r.status_code for r in await asyncio.gather(*held)} == {200}


async def test_before_any_write_finishes_the_time_they_have_taken_bounds_the_next() -> None:
    clock = Clock()
    app = Held(clock, max_inflight_writes=32, write_latency_target_s=1.0)
    held = await app.start("POST")  # none has finished: no cost learned yet
    clock.now += 0.3
    held += await app.start("POST")  # (1 + 1) x 0.3 s <= 1 s
    clock.now += 0.3
    refused = await app.client.post("/v1/work")  # (2 + 1) x 0.6 s of busy time without a finish > 1 s
    assert refused_for(refused, "write_latency_target_s") and not any(t.done() for t in held)
    app.release.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]


async def served(app: Held, clock: Clock, method: str, seconds: float, with_write: bool = False) -> list[int]:
    """One request of `method` (and, with `with_write`, a write beside it) held for `seconds` of the
    test's clock; their statuses."""
    tasks = await app.start(method) + (await app.start("POST") if with_write else [])
    clock.now += seconds
    app.release.set()
    codes = [r.status_code for r in await asyncio.gather(*tasks)]
    app.release.clear()
    return codes


async def reads_slowed_by_a_write(**limits: Any) -> tuple[Held, Clock]:
    """Reads that took 20 ms alone, then one that took 30 times as long beside a write of 0.6 s."""
    clock = Clock()
    app = Held(clock, max_inflight_writes=4, write_latency_target_s=1.5, **limits)
    for _ in range(3):
        assert await served(app, clock, "GET", 0.02) == [200]
    assert await served(app, clock, "GET", 0.6, with_write=True) == [200, 200]
    return app, clock


async def test_while_writes_slow_reads_down_they_are_paced_and_one_past_the_budget_is_refused_at_once() -> None:
    app, clock = await reads_slowed_by_a_write()
    guard = app.middleware.guard
    assert guard.pressure > guard.target and guard.limit == 0.5  # halved from the one write in use
    first = await app.start("POST")  # the first paced write starts now; the next one period (1.2 s) later
    refused = await app.client.post("/v1/work")  # 1.2 s away > the budget, 1.5 - 0.6 s
    assert refused_for(refused, "read_slowdown_max") and not first[0].done()
    assert (await app.client.post("/mcp")).status_code == 404  # reached the app: /mcp is not paced
    app.release.set()
    assert (await first[0]).status_code == 200 and app.served.count("POST") == 2
    app.release.clear()
    clock.now += 2  # no read for more than a second: nobody to protect, writes unpaced again
    held = await app.start("POST", 2)
    app.release.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200] and guard.limit == guard.ceiling


async def test_writes_that_leave_reads_as_fast_as_alone_are_not_paced() -> None:
    clock = Clock()
    app = Held(clock, max_inflight_writes=4, write_latency_target_s=1.5)
    for _ in range(3):
        assert await served(app, clock, "GET", 0.02) == [200]
    for _ in range(4):
        clock.now += 0.3
        assert await served(app, clock, "GET", 0.02, with_write=True) == [200, 200]
    guard = app.middleware.guard
    assert abs(guard.pressure - 1) < 1e-6 and guard.limit == guard.ceiling
    held = await app.start("POST", 3)  # all three at once
    app.release.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200] * 3


async def test_reads_slower_than_usual_with_no_write_beside_them_do_not_pace_writes() -> None:
    clock = Clock()
    app = Held(clock, max_inflight_writes=4, write_latency_target_s=1.5)
    for _ in range(3):
        assert await served(app, clock, "GET", 0.02) == [200]
    assert await served(app, clock, "POST", 0.6) == [200]  # a write alone
    for _ in range(4):  # then reads 30 times as slow as usual (a cold cache), no write overlapping them
        clock.now += 0.3
        assert await served(app, clock, "GET", 0.6) == [200]
    guard = app.middleware.guard
    assert guard.pressure == 1.0 and guard.limit == guard.ceiling
    held = await app.start("POST", 2)
    app.release.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]


async def test_pacing_is_off_at_read_slowdown_max_zero() -> None:
    app, _ = await reads_slowed_by_a_write(read_slowdown_max=0)
    held = await app.start("POST", 2)  # the same state, but nothing paces the second write
    app.release.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]
