"""The LangGraph store, through LangGraph's own `BaseStore` interface (sync and async), on the real
Neo4j; the items are checked as `(:StoreItem)` nodes too."""

from __future__ import annotations

import sys
import uuid
from typing import Iterator

import pytest

pytest.importorskip("langgraph.store.base", reason="the langgraph extra is not installed")

from kg import AsyncMemory, Memory, load_settings  # noqa: E402
from kg.integrations.langgraph import KgStore  # noqa: E402
from tests.cypher_state import cypher_value  # noqa: E402


@pytest.fixture(scope="module")
def sync_memory() -> Iterator[Memory]:
    with Memory(load_settings()) as memory:
        yield memory


@pytest.fixture
def store_ns(namespace: str) -> str:
    return namespace  # conftest's: a fresh namespace, deleted afterwards


async def count(memory: AsyncMemory, namespace: str) -> int:
    return await cypher_value(memory, "MATCH (i:StoreItem {namespace: $ns}) RETURN count(i) AS n", ns=namespace)


async def test_async_put_get_search_delete_and_namespaces(memory: AsyncMemory, store_ns: str) -> None:
    store = KgStore(memory, store_ns)
    await store.aput(("users", "maya", "prefs"), "db", {"text": "Maya prefers TimescaleDB for sensor data", "n": 3})
    await store.aput(("users", "maya", "prefs"), "tool", {"text": "Use uv, not pip", "n": 1})
    await store.aput(("users", "li", "prefs"), "food", {"text": "Li is vegetarian", "n": 2})
    await store.aput(("users", "li", "notes"), "raw", {"text": "not indexed"}, index=False)
    assert await count(memory, store_ns) == 4

    item = await store.aget(("users", "maya", "prefs"), "db")
    assert item is not None and item.value == {"text": "Maya prefers TimescaleDB for sensor data", "n": 3}
    assert item.namespace == ("users", "maya", "prefs") and item.key == "db"
    assert await store.aget(("users", "maya", "prefs"), "nope") is None

    created = item.created_at
    await store.aput(("users", "maya", "prefs"), "db", {"text": "Maya now prefers Postgres", "n": 4})
    again = await store.aget(("users", "maya", "prefs"), "db")
    assert again.value["n"] == 4 and again.created_at == created and again.updated_at > created
    assert await count(memory, store_ns) == 4  # replaced, not added

    hits = await store.asearch(("users",), query="install packages with pip or uv?", limit=2)
    assert hits[0].key == "tool" and hits[0].score > hits[1].score
    assert [h.key for h in await store.asearch(("users", "maya"))] == ["db", "tool"]  # newest first
    assert [h.key for h in await store.asearch(("users",), filter={"n": {"$gte": 2}})] == ["db", "food"]
    assert [h.key for h in await store.asearch(("users",), filter={"n": 1})] == ["tool"]
    assert [h.key for h in await store.asearch(("users",), limit=2, offset=1)] == ["raw", "food"]

    assert await store.alist_namespaces() == [("users", "li", "notes"), ("users", "li", "prefs"),
                                              ("users", "maya", "prefs")]
    assert await store.alist_namespaces(prefix=("users", "li")) == [("users", "li", "notes"), ("users", "li", "prefs")]
    assert await store.alist_namespaces(suffix=("prefs",)) == [("users", "li", "prefs"), ("users", "maya", "prefs")]
    assert await store.alist_namespaces(max_depth=2) == [("users", "li"), ("users", "maya")]

    await store.adelete(("users", "maya", "prefs"), "db")
    assert await store.aget(("users", "maya", "prefs"), "db") is None
    assert await count(memory, store_ns) == 3

    other = KgStore(memory, store_ns + "-other")  # another kg namespace sees nothing of this one
    assert await other.aget(("users", "maya", "prefs"), "tool") is None
    assert await other.alist_namespaces() == []


def test_sync_interface_over_memory(sync_memory: Memory) -> None:
    namespace = f"test-{uuid.uuid4().hex[:12]}"
    store = KgStore(sync_memory, namespace)
    try:
        store.put(("agent", "facts"), "home", {"text": "Maya lives in Lisbon"})
        store.put(("agent", "facts"), "work", {"text": "Maya works at Acme on sensors"})
        assert store.get(("agent", "facts"), "home").value == {"text": "Maya lives in Lisbon"}
        assert store.search(("agent",), query="where does Maya live?", limit=1)[0].key == "home"
        assert store.list_namespaces() == [("agent", "facts")]
        store.delete(("agent", "facts"), "home")
        assert store.get(("agent", "facts"), "home") is None
        assert [i.key for i in store.search(("agent",))] == ["work"]
    finally:
        sync_memory.delete_namespace(namespace)


async def test_async_calls_over_a_sync_memory(sync_memory: Memory, memory: AsyncMemory, store_ns: str) -> None:
    store = KgStore(sync_memory, store_ns)
    await store.aput(("a",), "k", {"text": "hello"})
    assert (await store.aget(("a",), "k")).value == {"text": "hello"}


def test_sync_calls_over_an_async_memory_say_what_to_use(memory: AsyncMemory) -> None:
    with pytest.raises(TypeError, match="Memory"):
        KgStore(memory, "x").get(("a",), "k")


def test_the_example_agent_remembers_and_recalls(sync_memory: Memory) -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "langgraph_agent.py"
    spec = importlib.util.spec_from_file_location("langgraph_agent", path)
    example = importlib.util.module_from_spec(spec)
    sys.modules["langgraph_agent"] = example  # LangGraph reads the State's annotations through it
    spec.loader.exec_module(example)
    namespace = f"test-{uuid.uuid4().hex[:12]}"
    agent = example.build(KgStore(sync_memory, namespace))
    try:
        def ask(message: str) -> str:
            return agent.invoke({"user_id": "maya", "message": message, "answer": "", "log": []})["answer"]

        assert ask("what database?") == "I don't know yet."
        ask("remember: my team picked TimescaleDB for the sensor data")
        ask("remember: I prefer uv over pip")
        assert "TimescaleDB" in ask("which database did we pick for sensors?")
        assert "uv" in ask("how should I install packages?")
    finally:
        sync_memory.delete_namespace(namespace)
