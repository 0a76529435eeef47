"""A question carries the time it is asked (`now`): "last month" counts back from it, at every door
(Python, kg.AsyncClient over HTTP, GET /search and /search/sessions, MCP over stdio, `kg search`).

The same sentence is said in February and in May, so every ranked list ties them and only the time
window can order them: asked in early June, "last month" is May; asked in early March, February.
One of the two answers contradicts the tie-break by id, so neither can pass by accident."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client as McpClient
from mcp.client.stdio import StdioServerParameters

from kg import AsyncClient, AsyncMemory
from kg.http import create_app
from tests.http_client import running, settings_with

REPO = Path(__file__).resolve().parents[1]
UTC = timezone.utc
SAID = "We hiked the ridge trail above the lake together."
QUESTION = "where did we hike last month?"
JUNE, MARCH = datetime(2023, 6, 5, 9, tzinfo=UTC), datetime(2023, 3, 3, 9, tzinfo=UTC)


@pytest.fixture
async def hikes(memory: AsyncMemory, namespace: str) -> str:
    for sid, day in (("feb", datetime(2023, 2, 10, 18, tzinfo=UTC)), ("may", datetime(2023, 5, 10, 18, tzinfo=UTC))):
        await memory.add_turns(namespace, sid, [{"role": "user", "text": SAID, "ts": day},
                                                {"role": "assistant", "text": "That sounds lovely.",
                                                 "ts": day.replace(minute=1)}])
        await memory.close_session(namespace, sid)
    return namespace


def _first_session(hits: list[Any]) -> str:
    return hits[0]["turn"]["session_id"] if isinstance(hits[0], dict) else hits[0].turn.session_id


async def test_now_orders_by_the_time_the_question_is_asked(memory: AsyncMemory, hikes: str) -> None:
    for now, expected in ((JUNE, "may"), (MARCH, "feb")):
        assert _first_session(await memory.search_turns(hikes, QUESTION, k=2, now=now)) == expected
        assert (await memory.search_sessions(hikes, QUESTION, k=2, now=now))[0].session.id == expected
        turns = [h for h in await memory.recall(hikes, QUESTION, k=5, now=now) if h.kind == "turn"]
        assert turns[0].session_id == expected
    # as_of hides what came later; now alone hides nothing
    assert {h.turn.session_id for h in await memory.search_turns(hikes, QUESTION, k=4, as_of=MARCH)} == {"feb"}
    assert {h.turn.session_id for h in await memory.search_turns(hikes, QUESTION, k=4, now=MARCH)} == {"feb", "may"}


async def test_now_at_the_http_door_and_through_the_client(memory: AsyncMemory, hikes: str) -> None:
    app = create_app(settings_with(keys={}), memory=memory)
    async with running(app) as api, AsyncClient("http://kg", transport=httpx.ASGITransport(app=app)) as client:
        for now, expected in ((JUNE, "may"), (MARCH, "feb")):
            r = await api.get(f"/v1/namespaces/{hikes}/search", params={"q": QUESTION, "k": 2, "now": now.isoformat()})
            assert r.status_code == 200, r.text
            assert _first_session(r.json()) == expected
            r = await api.get(f"/v1/namespaces/{hikes}/search/sessions",
                              params={"q": QUESTION, "k": 2, "now": now.isoformat()})
            assert r.status_code == 200, r.text
            assert r.json()[0]["session"]["id"] == expected
            assert _first_session(await client.search_turns(hikes, QUESTION, k=2, now=now)) == expected
            assert (await client.search_sessions(hikes, QUESTION, k=2, now=now))[0].session.id == expected
            recalled = [h for h in await client.recall(hikes, QUESTION, k=5, now=now) if h.kind == "turn"]
            assert recalled[0].session_id == expected
        bad = await api.get(f"/v1/namespaces/{hikes}/search", params={"q": QUESTION, "now": "last tuesday"})
        assert bad.status_code == 422 and "now" in bad.text


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(("KG_", "NEO4J_", "XDG_", "HF_", "HOME", "PATH"))}
    return {**env, "PYTHONPATH": str(REPO)}


async def test_now_at_the_cli_and_mcp_doors(hikes: str) -> None:
    for now, expected in ((JUNE, "may"), (MARCH, "feb")):
        done = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "kg.cli", "search", QUESTION, "-n", hikes, "-k", "2", "--json",
                             "--local", "--now", now.isoformat()],
            capture_output=True, text=True, cwd=REPO, env=_env(), timeout=300)
        assert done.returncode == 0, done.stderr
        assert _first_session(json.loads(done.stdout)) == expected
    params = StdioServerParameters(command=sys.executable, args=["-m", "kg.cli", "mcp", "-n", hikes], cwd=str(REPO),
                                   env=_env())
    async with asyncio.timeout(300):
        async with McpClient(params) as client:
            for now, expected in ((JUNE, "may"), (MARCH, "feb")):
                result = await client.call_tool("search_turns", {"namespace": hikes, "query": QUESTION, "k": 2,
                                                                 "now": now.isoformat()})
                assert not result.is_error, result.content
                content = result.structured_content
                hits = content.get("result", content) if isinstance(content, dict) else content
                assert _first_session(hits) == expected
                result = await client.call_tool("search_sessions", {"namespace": hikes, "query": QUESTION, "k": 2,
                                                                    "now": now.isoformat()})
                assert not result.is_error, result.content
                content = result.structured_content
                sessions = content.get("result", content) if isinstance(content, dict) else content
                assert sessions[0]["session"]["id"] == expected
