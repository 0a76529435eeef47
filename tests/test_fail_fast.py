"""With the database unreachable, requests answer 503 with Retry-After in about a second and
`/health` in under one. The database is real: the app connects through a TCP relay to the test
server, and the relay is then shut (listening socket and every open connection), exactly what a
client sees when the server goes away."""

from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator

import pytest
from pydantic import SecretStr

from kg import AsyncMemory, load_settings
from kg.http import create_app
from kg.core.store import resolve_connection
from tests.http_client import running


class Relay:
    """A TCP relay to the database that can be cut."""

    def __init__(self, port: int) -> None:
        self.target_port = port
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def cut(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.transport.abort()
        await self.server.wait_closed()


@pytest.fixture
async def cut_off() -> AsyncIterator[tuple[AsyncMemory, Relay]]:
    settings = load_settings()
    conn = resolve_connection(settings)  # the managed test server, started if needed
    relay = Relay(int(conn.uri.rsplit(":", 1)[1]))
    port = await relay.start()
    neo4j = settings.neo4j.model_copy(update={"uri": f"bolt://127.0.0.1:{port}",
                                              "password": SecretStr(conn.password or "")})
    memory = AsyncMemory(settings.model_copy(update={"neo4j": neo4j}))
    await memory.open()
    try:
        yield memory, relay
    finally:
        await memory.close()


async def test_requests_answer_503_fast_while_the_database_is_down(cut_off: tuple[AsyncMemory, Relay]) -> None:
    memory, relay = cut_off
    app = create_app(load_settings().model_copy(update={"http": load_settings().http.model_copy(
        update={"keys": {}})}), memory=memory)
    async with running(app) as api:
        assert (await api.get("/health")).status_code == 200
        await relay.cut()
        timings = {}
        for name, call in (
            ("health", lambda: api.get("/health")),
            ("facts", lambda: api.get("/v1/namespaces/ff-ns/facts", params={"subject": "user"})),
            ("remember", lambda: api.post("/v1/namespaces/ff-ns/facts",
                                          json={"subject": "user", "predicate": "likes", "object": "tea"})),
            ("messages", lambda: api.post("/v1/namespaces/ff-ns/messages", json={"messages": [
                {"role": "user", "text": "hello", "ts": "2025-05-01T12:00:00Z"}]})),
        ):
            started = time.perf_counter()
            response = await call()
            timings[name] = time.perf_counter() - started
            assert response.status_code == 503, (name, response.text)
            assert response.headers["Retry-After"].isdigit()
        print("answer times with the database down (s):", {k: round(v, 2) for k, v in timings.items()})
        assert timings["health"] < 2.5  # target 1 s; loose for a shared machine
        assert max(timings.values()) < 5  # target 2 s
