"""One retrieval stack behind every door: the same question with the same settings gets the same
top-k turns, in the same order, from Python, HTTP (GET /search), the CLI (`kg search --json` in a
process of its own, whose first embedding is the query) and MCP (`search_turns` over stdio, `kg mcp`
as a subprocess).

The data is built to tie: the same sentence said in two sessions (equal scores in every list, so
only the tie-break by turn id orders them), near-paraphrases, and a decoy namespace holding the same
vocabulary (the database's other tenants change BM25's statistics and the index's neighbours, but
never one door against another)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from kg import AsyncMemory
from kg.http import create_app
from tests.http_client import running, settings_with

REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
FIRST = {  # the data of the first failure: rank 4 of the first question was a near tie
    "db": ["Maya: we need a database for the sensor readings", "Tom: TimescaleDB handles time series well",
           "Maya: fine, we picked TimescaleDB with a 90-day retention"],
    "trip": ["Maya: I spent the weekend in Cascais", "Tom: the beach there is lovely in May"],
    "hiring": ["Tom: we hired Ana as a data engineer", "Maya: she starts on Monday and owns the ingest"],
}
SESSIONS = {
    "db": ["Maya: we need a database for the sensor readings", "Tom: TimescaleDB handles time series well",
           "Maya: fine, we picked TimescaleDB with a 90-day retention", "Tom: sounds good to me"],
    "db-review": ["Maya: we picked TimescaleDB with a 90-day retention", "Tom: sounds good to me",
                  "Maya: the sensor readings land there every minute"],
    "trip": ["Maya: I spent the weekend in Cascais", "Tom: the beach there is lovely in May",
             "Maya: sounds good to me"],
    "hiring": ["Tom: we hired Ana as a data engineer", "Maya: she starts on Monday and owns the ingest",
               "Tom: Ana starts on Monday"],
    "standup": ["Tom: Ana starts on Monday", "Maya: the ingest job failed twice last night",
                "Tom: I restarted the ingest job"],
    "budget": ["Maya: the cloud bill doubled in March", "Tom: the database cluster is most of it",
               "Maya: let us move the sensor readings to cold storage"],
}
DECOY = {"other": ["Lee: we picked Postgres for the sensor readings", "Kim: Ana starts on Monday",
                   "Lee: the beach in Cascais", "Kim: sounds good to me"]}
QUESTIONS = [
    "which database did we choose for the sensors?", "who joined the team?", "Cascais beach",
    "sounds good to me", "Ana starts on Monday", "what happened to the ingest job?",
    "TimescaleDB retention", "why did the cloud bill grow?", "sensor readings", "Monday",
    "what did Maya say about the weekend?", "data engineer",
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(("KG_", "NEO4J_", "XDG_", "HF_", "HOME", "PATH"))}
    return {**env, "PYTHONPATH": str(REPO)}


def _mcp_data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


async def _add(memory: AsyncMemory, namespace: str, sessions: dict[str, list[str]]) -> None:
    for n, (sid, lines) in enumerate(sessions.items()):
        await memory.add_turns(namespace, sid, [
            {"role": "user", "speaker": line.split(": ")[0], "text": line.split(": ", 1)[1],
             "ts": T0 + timedelta(days=n, minutes=i)} for i, line in enumerate(lines)])
    await memory.summarize_due(namespace, now=T0 + timedelta(days=10))


@pytest.fixture
async def decoy(memory: AsyncMemory) -> Any:
    ns = f"test-decoy-{os.getpid()}"
    await _add(memory, ns, DECOY)
    yield ns
    await memory.delete_namespace(ns)


@pytest.mark.parametrize(("data", "k"), [(FIRST, 4), (SESSIONS, 5)], ids=["first-failure", "ties"])
async def test_every_door_returns_the_same_top_k(memory: AsyncMemory, namespace: str, decoy: str,
                                                 data: dict[str, list[str]], k: int) -> None:
    await _add(memory, namespace, data)
    python = {q: [h.turn.id for h in await memory.search_turns(namespace, q, k)] for q in QUESTIONS}
    assert all(len(ids) == k for ids in python.values())

    async with running(create_app(settings_with(keys={}), memory=memory)) as api:
        for q in QUESTIONS:
            r = await api.get(f"/v1/namespaces/{namespace}/search", params={"q": q, "k": k})
            assert r.status_code == 200, r.text
            assert [h["turn"]["id"] for h in r.json()] == python[q], q

    # one process per question: each process's first embedding is the question itself
    for q in QUESTIONS:
        done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "kg.cli", "search", q, "-n", namespace,
                                                        "-k", str(k), "--json", "--local"],
                                       capture_output=True, text=True, cwd=REPO, env=_env(), timeout=300)
        assert done.returncode == 0, done.stderr
        assert [h["turn"]["id"] for h in json.loads(done.stdout)] == python[q], q

    params = StdioServerParameters(command=sys.executable, args=["-m", "kg.cli", "mcp", "-n", namespace],
                                   cwd=str(REPO), env=_env())
    async with asyncio.timeout(300):
        async with Client(params) as client:
            for q in QUESTIONS:
                hits = _mcp_data(await client.call_tool("search_turns", {"namespace": namespace, "query": q, "k": k}))
                assert [h["turn"]["id"] for h in hits] == python[q], q
            bad = await client.call_tool("search_turns", {"namespace": namespace, "query": "x", "k": 0})
            assert bad.is_error and "greater_than_equal" in str(bad.content)  # k is 1..100, refused not clamped
