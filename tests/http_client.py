"""The HTTP test client: the app's lifespan run beside an ASGI client, and the `api` fixture."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from kg import AsyncMemory, load_settings
from kg.core.settings.tree import HttpSettings
from kg.http import create_app


def settings_with(max_text_chars: int = 1000, **http: Any):
    base = load_settings()
    return base.model_copy(update={"http": HttpSettings(**{**base.http.model_dump(), **http}),
                                   "ingest": base.ingest.model_copy(update={"max_text_chars": max_text_chars})})


@contextlib.asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[None]:
    """The app's lifespan in a task of its own (its task groups must exit where they entered, and
    pytest-asyncio finalizes fixtures in another task); a failing start-up raises here."""
    started, stop = asyncio.Event(), asyncio.Event()

    async def lifespan() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    task = asyncio.create_task(lifespan())
    await asyncio.wait([task, asyncio.create_task(started.wait())], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()
    try:
        yield
    finally:
        stop.set()
        await task


@contextlib.asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The app served (`serving`), with a client over ASGI."""
    async with serving(app), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000") as c:
        yield c


@pytest.fixture
async def api(memory: AsyncMemory) -> AsyncIterator[httpx.AsyncClient]:
    """The app without keys (authentication off), on the shared memory, body limit 64 KiB."""
    app = create_app(settings_with(keys={}, max_body_bytes=65536, max_batch=50), memory=memory)
    async with running(app) as client:
        yield client


def msg(text: str, minute: int = 0, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "text": text, "ts": f"2025-05-01T12:{minute:02d}:00Z", **extra}
