"""Fixtures of LangGraph's vendored store tests (README.md here): each test's stores are KgStores
(`kgstores`) in kg namespaces of their own, deleted after it.

The tests that do not pass are listed in one place, the table "What differs" of docs/langgraph.md,
with the reason: those marked `skipped` test a backend's own internals and are skipped; those
marked `fails` must fail (a strict xfail: if one starts passing, the run says so and the table is
out of date). Any other failure is a failure.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest

pytest.importorskip("langgraph.store.base", reason="the langgraph extra is not installed")

from kg import AsyncMemory, Memory, load_settings  # noqa: E402
from tests.third_party.langgraph import kgstores  # noqa: E402
from tests.third_party.langgraph.embed_test_utils import CharacterEmbeddings  # noqa: E402

DOC = Path(__file__).resolve().parents[3] / "docs" / "langgraph.md"
ROW = re.compile(r"^\| `(test_lg_[^`]+)` \| (skipped|fails) \| (.+) \|$")


def differences() -> list[tuple[str, str, str]]:
    """(test id pattern, skipped or fails, why) of each row of the table in docs/langgraph.md; the
    pattern is `file::test[params]`, where `*` stands for anything."""
    return [(m[1], m[2], m[3]) for line in DOC.read_text("utf-8").splitlines() if (m := ROW.match(line))]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rows = differences()
    for item in items:
        if "/third_party/langgraph/" not in str(item.path).replace("\\", "/"):
            continue
        test_id = f"{item.path.name}::{item.name}"
        for pattern, outcome, why in rows:
            if re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), test_id):  # `*`: anything, the rest as it is
                item.add_marker(pytest.mark.skip(reason=why) if outcome == "skipped"
                                else pytest.mark.xfail(reason=why, strict=True))
                break


@pytest.fixture
def fake_embeddings() -> CharacterEmbeddings:
    """The Postgres tests' conftest fixture (the other files define their own)."""
    return CharacterEmbeddings(dims=500)


@pytest.fixture(scope="session")
def sync_memory() -> Iterator[Memory]:
    with Memory(load_settings()) as memory:
        yield memory


@pytest.fixture(autouse=True)
async def kg_stores(sync_memory: Memory, memory: AsyncMemory) -> AsyncIterator[None]:
    kgstores.CURRENT = kgstores.Stores(sync_memory, memory)
    yield
    made, kgstores.CURRENT = kgstores.CURRENT, None
    for store in made.made:
        stop = getattr(store, "stop_ttl_sweeper", None)
        if stop is not None:
            await stop()
        await memory.delete_namespace(store.namespace)
