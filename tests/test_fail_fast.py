"""With the database unreachable, requests answer 503 with Retry-After in about a second and
`/health` in under one. The database is real: the app connects through a TCP relay to the test
server, and the relay is then shut (listening socket and every open connection), exactly what a
client sees when the server goes away."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import AsyncIterator, Awaitable, Callable

import httpx
import pytest
from pydantic import SecretStr

from kg import AsyncMemory, load_settings
from kg.core.store.store import resolve_connection
from kg.http import create_app
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


# -- issue 24: Neo4j down or still starting when the service starts, or silent -------------------------
class Silent:
    """A port that accepts connections and never answers: a server still starting, or hung."""

    def __init__(self) -> None:
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self, port: int = 0) -> int:
        self.server = await asyncio.start_server(self._hold, "127.0.0.1", port)
        return self.server.sockets[0].getsockname()[1]

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        await reader.read()  # until the client gives up

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            for writer in self.writers:
                writer.transport.abort()


def outage_calls(api: httpx.AsyncClient) -> dict[str, Callable[[], Awaitable[httpx.Response]]]:
    ns = "/v1/namespaces/ff-ns"
    return {
        "health": lambda: api.get("/health"),
        "ready": lambda: api.get("/ready"),
        "search": lambda: api.get(f"{ns}/search", params={"q": "tea"}),
        "recall": lambda: api.get(f"{ns}/recall", params={"q": "tea"}),
        "sessions": lambda: api.get(f"{ns}/sessions"),
        "facts": lambda: api.get(f"{ns}/facts", params={"subject": "user"}),
        "remember": lambda: api.post(f"{ns}/facts", json={"subject": "user", "predicate": "likes", "object": "tea"}),
        "relate": lambda: api.post(f"{ns}/relationships", json={"subject": "x", "type": "works_for", "object": "Acme"}),
        "messages": lambda: api.post(f"{ns}/messages", json={"messages": [
            {"role": "user", "text": "hello", "ts": "2025-05-01T12:00:00Z"}]}),
    }


async def answers_503(api: httpx.AsyncClient) -> dict[str, float]:
    timings = {}
    for name, call in outage_calls(api).items():
        started = time.perf_counter()
        response = await call()
        timings[name] = round(time.perf_counter() - started, 2)
        assert response.status_code == 503, (name, response.text)
        assert response.headers["Retry-After"].isdigit(), name
        assert response.json()["message"], name
    return timings


@pytest.mark.parametrize("listener", ["closed port", "silent server"])
async def test_the_app_starts_and_answers_503_while_the_database_cannot_be_reached(listener: str) -> None:
    """The app (and `kg serve`, `kg mcp`) starts although Neo4j is down or still starting; each request
    answers 503 with Retry-After at once, and one reconnection runs in the background."""
    silent = Silent()
    if listener == "silent server":
        port = await silent.start()
    else:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    base = load_settings()
    settings = base.model_copy(update={"neo4j": base.neo4j.model_copy(update={"uri": f"bolt://127.0.0.1:{port}"}),
                                       "http": base.http.model_copy(update={"keys": {}})})
    try:
        async with running(create_app(settings)) as api:
            print(listener, "answer times (s):", await answers_503(api))
    finally:
        await silent.stop()


async def test_a_silent_database_fails_fast_after_the_first_statement(cut_off: tuple[AsyncMemory, Relay]) -> None:
    """A server that accepts connections but does not answer held each statement about 4 s (two
    connection attempts and the driver's retry); once one statement has found it down, the next
    ones wait only for one shared ping."""
    memory, relay = cut_off
    port = int(memory.settings.neo4j.uri.rsplit(":", 1)[1])  # type: ignore[union-attr]
    app = create_app(load_settings().model_copy(update={"http": load_settings().http.model_copy(
        update={"keys": {}})}), memory=memory)
    silent = Silent()
    async with running(app) as api:
        await relay.cut()
        await silent.start(port)
        try:
            print("silent database, answer times (s):", await answers_503(api))
        finally:
            await silent.stop()
