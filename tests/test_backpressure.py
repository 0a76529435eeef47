"""Backpressure (`kg.http.backpressure`): past the bound on in-flight writes or queued reads, or a
key's rate, a request is refused at once with 503/429 and Retry-After; nothing is dropped silently.
Pure: the middleware around a small app whose handlers wait until the test releases them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kg.core.config import HttpSettings
from kg.http.backpressure import Backpressure


def app_with(**limits: Any) -> tuple[httpx.AsyncClient, asyncio.Event, list[str]]:
    release = asyncio.Event()
    served: list[str] = []

    async def slow(request: Request) -> JSONResponse:
        await release.wait()
        served.append(request.method)
        return JSONResponse({"ok": True})

    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    inner = Starlette(routes=[Route("/work", slow, methods=["GET", "POST"]), Route("/health", health)])
    app = Backpressure(inner, HttpSettings(**limits))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
    return client, release, served


async def timed(call: Any) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    response = await call
    return response, time.perf_counter() - started


async def test_writes_past_the_bound_are_refused_at_once_with_retry_after() -> None:
    client, release, served = app_with(max_inflight_writes=2, retry_after_s=3)
    held = [asyncio.create_task(client.post("/work")) for _ in range(2)]
    await asyncio.sleep(0.05)
    refused, took = await timed(client.post("/work"))
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "3"
    assert refused.json()["error"] == "overloaded" and "max_inflight_writes" in refused.json()["message"]
    assert took < 0.1
    assert (await client.get("/health")).status_code == 200  # probes are never refused
    release.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]
    assert served == ["POST", "POST"]  # the refused one never reached the app
    assert (await client.post("/work")).status_code == 200  # a slot is free again


async def test_reads_queue_up_to_the_bound_then_are_refused() -> None:
    client, release, served = app_with(max_inflight_reads=1, max_queued_reads=2, read_queue_wait_s=5)
    running = asyncio.create_task(client.get("/work"))
    await asyncio.sleep(0.05)
    queued = [asyncio.create_task(client.get("/work")) for _ in range(2)]
    await asyncio.sleep(0.05)
    refused, took = await timed(client.get("/work"))
    assert refused.status_code == 503 and "max_queued_reads" in refused.json()["message"]
    assert refused.headers["Retry-After"] == "1" and took < 0.1
    release.set()
    answers = await asyncio.gather(running, *queued)
    assert [r.status_code for r in answers] == [200, 200, 200] and served == ["GET"] * 3


async def test_a_queued_read_waits_no_longer_than_read_queue_wait_s() -> None:
    client, release, _ = app_with(max_inflight_reads=1, max_queued_reads=5, read_queue_wait_s=0.2)
    running = asyncio.create_task(client.get("/work"))
    await asyncio.sleep(0.05)
    refused, took = await timed(client.get("/work"))
    assert refused.status_code == 503 and "read_queue_wait_s" in refused.json()["message"]
    assert 0.15 < took < 0.5
    release.set()
    assert (await running).status_code == 200


async def test_writes_do_not_take_read_slots() -> None:
    client, release, _ = app_with(max_inflight_reads=1, max_queued_reads=0, max_inflight_writes=5)
    read = asyncio.create_task(client.get("/work"))
    await asyncio.sleep(0.05)
    write = asyncio.create_task(client.post("/work"))
    assert (await client.get("/work")).status_code == 503  # the read bound, not the write one
    release.set()
    assert (await read).status_code == 200 and (await write).status_code == 200


async def test_a_key_past_its_rate_gets_429_and_other_keys_do_not() -> None:
    client, release, _ = app_with(rate_per_key=2.0, rate_burst=3)
    release.set()
    codes = [(await client.get("/work", headers={"X-API-Key": "k1"})).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = await client.get("/work", headers={"X-API-Key": "k1"})
    assert limited.headers["Retry-After"] and limited.json()["error"] == "rate_limited"
    assert "rate_per_key" in limited.json()["message"]
    assert (await client.get("/work", headers={"X-API-Key": "k2"})).status_code == 200
    await asyncio.sleep(0.55)  # one token back at 2 per second
    assert (await client.get("/work", headers={"X-API-Key": "k1"})).status_code == 200


async def test_no_bound_when_set_to_zero() -> None:
    client, release, _ = app_with(max_inflight_writes=0, max_inflight_reads=0)
    held = [asyncio.create_task(client.post("/work")) for _ in range(50)]
    held += [asyncio.create_task(client.get("/work")) for _ in range(50)]
    await asyncio.sleep(0.1)
    release.set()
    assert {r.status_code for r in await asyncio.gather(*held)} == {200}
