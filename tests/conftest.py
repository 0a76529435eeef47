"""Tests run against the real local Neo4j (started on demand by AsyncMemory); each test gets its
own namespace, deleted afterwards."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest

from kg import AsyncMemory, load_settings

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


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
