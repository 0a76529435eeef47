"""Write-to-recall lag is zero for turns: a message acknowledged by any door is found by the very
next search, at every door (Python, kg.Client over HTTP, MCP over stdio, the CLI), in a namespace
whose other sessions are closed and summarized. (`python -m bench.freshness` times the lag of
facts, which need the session indexed: docs/operations.md.)"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from mcp import Client

from kg import AsyncClient, AsyncMemory
from kg.http import create_app
from tests.http_client import serving, settings_with
from tests.test_cli_doors import kg
from tests.test_erase import data, stdio_params

T0 = datetime(2025, 3, 1, 9, tzinfo=timezone.utc)
HISTORY = ["We picked TimescaleDB for the sensor data.", "The greenhouse in Faro needs a new pump.",
           "Maya moved to Lisbon and works remotely now.", "Use uv instead of pip for the new service.",
           "The deadline for the grant report is in May.", "Tom prefers tea; Eve prefers coffee."]


async def history(memory: AsyncMemory, namespace: str) -> None:
    for n, text in enumerate(HISTORY):
        session = f"old-{n % 3}"
        await memory.add_turns(namespace, session, [{"role": "user", "speaker": "Maya", "text": text,
                                                     "ts": T0 + timedelta(days=n)}])
    for n in range(3):
        await memory.close_session(namespace, f"old-{n}")


def fresh() -> tuple[str, str]:
    """A message no other turn resembles, and the question that should find it."""
    word = "quokka" + uuid.uuid4().hex[:6]
    return f"The delivery code for the {word} shipment is 4471.", f"what is the delivery code for {word}?"


def first_texts(hits: list[Any]) -> list[str]:
    return [(h if isinstance(h, dict) else h.model_dump())["turn"]["text"] for h in hits]


async def test_the_very_next_search_finds_the_turn_in_python(memory: AsyncMemory, namespace: str) -> None:
    await history(memory, namespace)
    for recipe in (None, "flat", "bm25", "hybrid"):
        text, question = fresh()
        await memory.add_message(namespace, "user", text, ts=datetime.now(timezone.utc), speaker="Maya")
        assert text in first_texts(await memory.search_turns(namespace, question, 5, recipe)), recipe


async def test_the_very_next_search_finds_the_turn_over_http(memory: AsyncMemory, namespace: str) -> None:
    await history(memory, namespace)
    app = create_app(settings_with(keys={}), memory=memory)
    async with serving(app), AsyncClient("http://kg.test", transport=httpx.ASGITransport(app=app)) as client:
        for n in range(3):
            text, question = fresh()
            await client.add_turns(namespace, f"new-{n}", [{"role": "user", "text": text,
                                                             "ts": datetime.now(timezone.utc)}])
            assert text in first_texts(await client.search_turns(namespace, question, 5))


async def test_the_very_next_search_finds_the_turn_over_mcp(memory: AsyncMemory, namespace: str) -> None:
    await history(memory, namespace)
    async with asyncio.timeout(180):
        async with Client(stdio_params()) as client:
            for _ in range(3):
                text, question = fresh()
                stored = data(await client.call_tool("add_messages", {"namespace": namespace, "messages": [
                    {"role": "user", "text": text, "ts": datetime.now(timezone.utc).isoformat()}]}))
                assert stored["written"] == 1
                hits = data(await client.call_tool("search_turns", {"namespace": namespace, "query": question, "k": 5}))
                assert text in first_texts(hits)


async def test_the_very_next_search_finds_the_turn_from_the_cli(memory: AsyncMemory, namespace: str,
                                                                tmp_path: Any) -> None:
    await history(memory, namespace)
    text, question = fresh()
    lines = tmp_path / "one.jsonl"
    lines.write_text(json.dumps({"namespace": namespace, "role": "user", "text": text,
                                 "ts": datetime.now(timezone.utc).isoformat()}) + "\n")
    stored = kg("ingest", str(lines))
    assert stored.returncode == 0 and "new turns 1" in stored.stdout, stored.stdout + stored.stderr
    found = kg("search", question, "-n", namespace, "--json", "--local")
    assert found.returncode == 0 and text in first_texts(json.loads(found.stdout)), found.stdout
