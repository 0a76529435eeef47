"""Tests run against the real local Neo4j (started on demand by AsyncMemory); each test gets its
own namespace, deleted afterwards.

`KG_TEST_URI_SCHEME=neo4j` runs them through a routing URI instead of a direct Bolt one: the local
server is started first and every `Settings` of the run gets `neo4j://127.0.0.1:<bolt port>` and its
password through the environment, so the driver fetches a routing table, sends reads and writes by
access mode and chains bookmarks, as against a cluster.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest

from kg import AsyncMemory, Settings, load_settings
from services.store import resolve_connection

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
URI_SCHEMES = ("bolt", "neo4j")


def pytest_configure(config: pytest.Config) -> None:
    scheme = os.environ.get("KG_TEST_URI_SCHEME", "bolt")
    if scheme not in URI_SCHEMES:
        raise pytest.UsageError(f"KG_TEST_URI_SCHEME must be one of {URI_SCHEMES}, got {scheme!r}")
    if scheme == "neo4j" and not os.environ.get("KG_NEO4J__URI"):
        conn = resolve_connection(Settings())  # the managed server, started now
        os.environ["KG_NEO4J__URI"] = conn.uri.replace("bolt://", "neo4j://", 1)
        if conn.password is not None:
            os.environ["KG_NEO4J__PASSWORD"] = conn.password
        load_settings.cache_clear()


@pytest.fixture(scope="session")
async def memory() -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(load_settings()) as mem:
        yield mem


@pytest.fixture
async def namespace(memory: AsyncMemory) -> AsyncIterator[str]:
    ns = f"test-{uuid.uuid4().hex[:12]}"
    yield ns
    await memory.delete_namespace(ns)


def shared_data(name: str) -> Path:
    """A file of ../shared/data, or a skip saying why the test cannot run."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared development data is not beside this checkout")
    return path
