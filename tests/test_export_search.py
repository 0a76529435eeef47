"""A copy answers like the original: `kg export` (no vectors) then `kg import ndjson` into another
namespace, and every search at every door (Python, kg.Client over HTTP, MCP over stdio, the CLI)
returns the same turns in the same order, from a namespace whose sessions were closed (summaries,
context keys) and indexed. The comparison is of the public search answers, whatever the retrieval
stack reads underneath."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, AsyncIterator

import httpx
import pytest
from mcp import Client

from kg import AsyncClient, AsyncMemory
from kg.http import create_app
from tests.http_client import serving, settings_with
from tests.test_cli_doors import kg
from tests.test_erase import data, stdio_params
from tests.test_forget_rewind import offline_memory

T0 = datetime(2025, 3, 1, 9, tzinfo=timezone.utc)
RETRO = [  # the four-turn session of issue 36
    ("user", "Maya", "We need somewhere to keep the sensor data from the greenhouses."),
    ("assistant", None, "Options: PostgreSQL with TimescaleDB, InfluxDB, or plain Parquet files on S3."),
    ("user", "Maya", "We picked TimescaleDB, with a 90-day retention."),
    ("assistant", None, "Noted: TimescaleDB, 90 days of retention."),
]
OTHER = [
    ("user", "Maya", "I moved to Lisbon last month, so I work remotely now."),
    ("assistant", None, "Welcome to Lisbon! Remote work it is."),
    ("user", "Maya", "No, actually, use uv instead of pip for the new service."),
]
QUESTIONS = ["which database did we pick?", "how long do we keep the data?", "where does Maya live?",
             "package manager", "greenhouse sensors"]
RECIPES = [None, "flat", "bm25", "hybrid", "hierarchical"]


@pytest.fixture
async def copy(offline_memory: AsyncMemory, namespace: str, tmp_path: Path) -> AsyncIterator[str]:
    """The namespace, closed and indexed, exported by `kg export` and imported by `kg import ndjson`
    into another namespace (whose name is yielded)."""
    memory = offline_memory
    for session, turns, start in (("retro", RETRO, T0), ("move", OTHER, T0 + timedelta(days=3))):
        await memory.add_turns(namespace, session, [
            {"role": role, "speaker": speaker, "text": text, "ts": start + timedelta(minutes=i)}
            for i, (role, speaker, text) in enumerate(turns)])
        await memory.close_session(namespace, session)
        assert (await memory.index_session(namespace, session)).status == "indexed"
    target = f"test-{uuid.uuid4().hex[:12]}"
    file = tmp_path / "copy.ndjson"
    done = kg("export", "-n", namespace, "-o", str(file))
    assert done.returncode == 0, done.stderr
    assert '"embedding"' not in file.read_text()  # the vectors did not travel: the import makes them
    done = kg("import", "ndjson", str(file), "-n", target)
    assert done.returncode == 0 and "embedded" in done.stdout, done.stdout + done.stderr
    yield target
    await memory.delete_namespace(target)


def turns(hits: list[Any]) -> list[tuple[Any, ...]]:
    """The turns a search answered, in order, as the caller reads them (ids differ between copies)."""
    out = []
    for h in hits:
        h = h if isinstance(h, dict) else h.model_dump(mode="json")
        if "session" in h:  # a session hit: the session and its best turns
            out.append(("session", h["session"]["id"], *[(t["turn"]["session_id"], t["turn"]["idx"])
                                                         for t in h["turns"]]))
        elif "kind" in h:  # recall, search_memories: turns, facts and summaries
            out.append((h["kind"], h["session_id"], h["text"]))
        else:
            out.append((h["turn"]["session_id"], h["turn"]["idx"], h["turn"]["text"]))
    return out


async def searches(door: Any, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for q in QUESTIONS:
        for recipe in RECIPES:
            found[f"turns {q} {recipe}"] = turns(await door.search_turns(namespace, q, 10, recipe))
        found[f"sessions {q}"] = turns(await door.search_sessions(namespace, q, 5))
        found[f"memories {q}"] = turns(await door.search_memories(namespace, q, 10))
        found[f"recall {q}"] = turns(await door.recall(namespace, q, 10))
    return found


def same(original: dict[str, Any], copied: dict[str, Any]) -> None:
    assert original.keys() == copied.keys()
    for key in original:
        assert copied[key] == original[key], key
    assert original[f"turns {QUESTIONS[0]} None"][0][2] == RETRO[2][2]  # the answer, first


async def test_the_copy_answers_like_the_original_in_python(offline_memory: AsyncMemory, namespace: str,
                                                            copy: str) -> None:
    same(await searches(offline_memory, namespace), await searches(offline_memory, copy))


async def test_the_copy_answers_like_the_original_over_http(offline_memory: AsyncMemory, namespace: str,
                                                            copy: str) -> None:
    app = create_app(settings_with(keys={}), memory=offline_memory)
    async with serving(app), AsyncClient("http://kg.test", transport=httpx.ASGITransport(app=app)) as client:
        found = {}
        for q in QUESTIONS:  # the HTTP API takes no recipe for sessions and memories: the server's
            for ns in (namespace, copy):
                found[ns] = found.get(ns, {})
                for recipe in RECIPES:
                    found[ns][f"turns {q} {recipe}"] = turns(await client.search_turns(ns, q, 10, recipe))
                found[ns][f"sessions {q}"] = turns(await client.search_sessions(ns, q, 5))
                found[ns][f"memories {q}"] = turns(await client.search_memories(ns, q, 10))
                found[ns][f"recall {q}"] = turns(await client.recall(ns, q, 10))
    same(found[namespace], found[copy])


async def test_the_copy_answers_like_the_original_over_mcp(namespace: str, copy: str) -> None:
    async with asyncio.timeout(240):
        async with Client(stdio_params()) as client:
            found: dict[str, dict[str, Any]] = {namespace: {}, copy: {}}
            for ns in (namespace, copy):
                for q in QUESTIONS:
                    for recipe in RECIPES:
                        args = {"namespace": ns, "query": q, "k": 10} | ({"recipe": recipe} if recipe else {})
                        found[ns][f"turns {q} {recipe}"] = turns(data(await client.call_tool("search_turns", args)))
                    for tool, k in (("search_sessions", 5), ("search_memories", 10), ("recall", 10)):
                        hits = data(await client.call_tool(tool, {"namespace": ns, "query": q, "k": k}))
                        found[ns][f"{tool} {q}"] = turns(hits)
    for key in found[namespace]:
        assert found[copy][key] == found[namespace][key], key


async def test_the_copy_answers_like_the_original_from_the_cli(namespace: str, copy: str) -> None:
    for q in QUESTIONS[:2]:  # `kg search` is one process a search: two questions, every recipe
        for recipe in RECIPES:
            answers = []
            for ns in (namespace, copy):
                args = ["search", q, "-n", ns, "-k", "10", "--json", "--local"] + (["--recipe", recipe] if recipe else [])
                done = kg(*args)
                assert done.returncode == 0, done.stderr
                answers.append(turns(json.loads(done.stdout)))
            assert answers[1] == answers[0], (q, recipe)
