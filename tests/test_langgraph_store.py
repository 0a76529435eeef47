"""The LangGraph store, through LangGraph's own `BaseStore` interface (sync and async, over a `Memory`
and an `AsyncMemory`, in graph nodes), on the real Neo4j; the items are checked as `(:StoreItem)`
nodes too. LangGraph's own store tests run against it in tests/third_party/langgraph/."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

import numpy as np
import pytest

pytest.importorskip("langgraph.store.base", reason="the langgraph extra is not installed")

from langgraph.store.base import PutOp, SearchOp
from langgraph.store.base.embed import get_text_at_path

from kg import AsyncMemory, Memory
from kg.core.settings.tree import JobSettings
from kg.integrations.langgraph import KgStore, ops
from kg.jobs.queue import JobQueue
from kg.jobs.sweeps import run_sweep
from kg.jobs.worker import Worker
from tests.cypher_state import cypher_rows, cypher_value

FAST = JobSettings(max_attempts=3, backoff_initial_s=0.05, backoff_max_s=0.2, lease_s=1.0, heartbeat_s=0.3,
                   poll_s=0.1, concurrency=2)


@pytest.fixture
def store_ns(namespace: str) -> str:
    return namespace  # conftest's: a fresh namespace, deleted afterwards


async def count(memory: AsyncMemory, namespace: str) -> int:
    return await cypher_value(memory, "MATCH (i:StoreItem {namespace: $ns}) RETURN count(i) AS n", ns=namespace)


def letters(texts: list[str]) -> list[list[float]]:
    """A cheap `embed` of our own: counts of a, b and c (the store must use it, not the memory's)."""
    return [[float(t.count("a")), float(t.count("b")), float(t.count("c"))] for t in texts]


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


async def test_sync_calls_over_an_async_memory_work_from_threads_not_on_its_loop(memory: AsyncMemory,
                                                                                 store_ns: str) -> None:
    store = KgStore(memory, store_ns)
    with pytest.raises(asyncio.InvalidStateError, match="await store.aget"):
        store.get(("a",), "k")  # on the memory's own loop: it would block the loop that serves it
    await asyncio.to_thread(store.put, ("a",), "k", {"text": "from a thread"})
    assert (await asyncio.to_thread(store.get, ("a",), "k")).value == {"text": "from a thread"}
    assert [i.key for i in await asyncio.to_thread(store.search, ("a",))] == ["k"]


async def test_a_sync_graph_node_uses_a_store_over_an_async_memory(memory: AsyncMemory, store_ns: str) -> None:
    """LangGraph runs a sync node in a thread even under `ainvoke`: the store serves it."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.store.base import BaseStore

    class State(TypedDict):
        text: str
        found: list[str]

    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:  # sync
        store.put(("notes",), "n1", {"text": state["text"]})
        return {"found": [i.value["text"] for i in store.search(("notes",), query=state["text"])]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    out = await graph.compile(store=KgStore(memory, store_ns)).ainvoke({"text": "the sensor data goes to TimescaleDB",
                                                                       "found": []})
    assert out["found"] == ["the sensor data goes to TimescaleDB"]
    assert await count(memory, store_ns) == 1


# -- issue 34's two bugs -----------------------------------------------------------------------
def test_regression_a_read_meeting_an_item_deleted_meanwhile_leaves_it_out() -> None:
    """A row read while another transaction deleted its item has a null value: it was decoded with
    `json.loads(None)` (TypeError) in search and get; it is left out."""
    row = {"id": "si_1", "path": ["a"], "key": "k", "value": None, "created_at": None, "updated_at": None,
           "score": None}
    live = dict(row, id="si_2", key="k2", value=json.dumps({"x": 1}))
    assert [r["key"] for r in ops._page([row, live], SearchOp(("a",), None, 10, 0))] == ["k2"]


async def test_regression_reads_racing_deletes_of_another_store_do_not_crash(memory: AsyncMemory,
                                                                             store_ns: str) -> None:
    writer, reader = KgStore(memory, store_ns), KgStore(memory, store_ns)  # two queues: concurrent transactions
    for round_ in range(5):
        await asyncio.gather(*(writer.aput(("r",), f"k{i}", {"text": f"item {i} of round {round_}"}, index=False)
                               for i in range(30)))
        found = await asyncio.gather(*(writer.adelete(("r",), f"k{i}") for i in range(30)),
                                     *(reader.asearch(("r",), limit=50) for _ in range(10)),
                                     *(reader.aget(("r",), f"k{i}") for i in range(30)))
        assert all(hit is None or hit.value["text"].startswith("item") for hit in found[40:])
    assert await count(memory, store_ns) == 0


async def test_regression_a_large_gather_is_a_few_transactions_not_a_connection_each(
        memory: AsyncMemory, store_ns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """2000 concurrent puts and 2000 gets: they failed with ConnectionAcquisitionTimeoutError
    (a connection each, 1.5 s to get one) and left some puts written; now they are batched."""
    transactions = 0
    real = memory.store.transaction

    async def counted(work: Any) -> Any:
        nonlocal transactions
        transactions += 1
        return await real(work)

    monkeypatch.setattr(memory.store, "transaction", counted)
    store = KgStore(memory, store_ns, index={"dims": 3, "embed": letters, "fields": ["text"]})
    n = 2000
    puts = [store.aput(("big",), f"k{i}", {"text": f"abc {i}"}) for i in range(n)]
    gets = [store.aget(("big",), f"k{i}") for i in range(n)]
    results = await asyncio.gather(*puts, *gets)
    assert results[:n] == [None] * n
    assert transactions <= 3  # what is queued meanwhile joins a batch, up to 2000 operations each
    assert await count(memory, store_ns) == n
    assert {i.key for i in await store.asearch(("big",), limit=n)} == {f"k{i}" for i in range(n)}


async def test_a_call_that_fails_fails_alone_and_writes_nothing(memory: AsyncMemory, store_ns: str) -> None:
    def picky(texts: list[str]) -> list[list[float]]:
        if any("boom" in t for t in texts):
            raise RuntimeError("the embedding service refused 'boom'")
        return letters(texts)

    store = KgStore(memory, store_ns, index={"dims": 3, "embed": picky, "fields": ["text"]})
    results = await asyncio.gather(*(store.aput(("p",), f"k{i}", {"text": "boom" if i == 7 else f"ok {i}"})
                                     for i in range(20)), return_exceptions=True)
    failed = [i for i, r in enumerate(results) if isinstance(r, Exception)]
    assert failed == [7] and "boom" in str(results[7])
    assert await count(memory, store_ns) == 19 and await store.aget(("p",), "k7") is None
    with pytest.raises(RuntimeError, match="boom"):  # one call of two puts: neither is written
        await store.abatch([PutOp(("q",), "fine", {"text": "fine"}), PutOp(("q",), "bad", {"text": "boom"})])
    assert await store.asearch(("q",)) == []


async def test_an_item_stored_before_keeps_its_vector(memory: AsyncMemory, store_ns: str) -> None:
    """Migration 0015: an item of one `embedding` (of one `text`) becomes a run of one vector."""
    from kg import cypher

    store = KgStore(memory, store_ns, index={"dims": 3, "embed": letters, "fields": ["text"]})
    await cypher_rows(memory, "CREATE (:StoreItem {id: $id, namespace: $ns, path: ['old'], key: 'k', value: $value, "
                              "text: 'aaa', embedding: [1.0, 0.0, 0.0], created_at: datetime(), updated_at: datetime()})",
                      id=ops.item_id(store_ns, ("old",), "k"), ns=store_ns, value=json.dumps({"text": "aaa"}))
    for statement in cypher.statements("migrations/0015_store_item_vectors")[:2]:
        await cypher_rows(memory, statement)
    [hit] = await store.asearch(("old",), query="a")
    assert hit.value == {"text": "aaa"} and hit.score == pytest.approx(1.0)
    assert await cypher_rows(memory, "MATCH (i:StoreItem {namespace: $ns}) RETURN i.texts AS texts, i.dims AS dims, "
                                     "i.embedding AS embedding", ns=store_ns) == [{"texts": ["aaa"], "dims": 3,
                                                                                   "embedding": None}]


# -- index, scores, filters ------------------------------------------------------------------------
async def test_index_embeds_each_field_text_with_the_given_embed(memory: AsyncMemory, store_ns: str) -> None:
    store = KgStore(memory, store_ns, index={"dims": 3, "embed": letters, "fields": ["title", "tags[*]"]})
    assert store.index_config == {"dims": 3, "embed": letters, "fields": ["title", "tags[*]"]}
    await store.aput(("d",), "doc", {"title": "aaa", "tags": ["bbb", "ccc"], "body": "not embedded"})
    [row] = await cypher_rows(memory, "MATCH (i:StoreItem {namespace: $ns}) RETURN i.texts AS texts, "
                                      "i.vectors AS vectors, i.dims AS dims", ns=store_ns)
    assert row == {"texts": ["aaa", "bbb", "ccc"], "dims": 3,
                   "vectors": [3.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 3.0]}  # a vector per text
    [hit] = await store.asearch(("d",), query="cc")  # closest to the third vector: cosine 1
    assert hit.score == pytest.approx(1.0)
    await store.aput(("d",), "plain", {"title": "aaa"}, index=False)
    assert [(h.key, h.score) for h in await store.asearch(("d",), query="c")][1] == ("plain", None)

    with pytest.raises(ValueError, match="index.dims: 4, but `embed` made a vector of 3"):
        await KgStore(memory, store_ns, index={"dims": 4, "embed": letters}).aput(("d",), "x", {"title": "a"})
    with pytest.raises(ValueError, match="index: unknown key 'distance_type'"):
        KgStore(memory, store_ns, index={"dims": 3, "embed": letters, "distance_type": "l2"})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ValueError, match="index.dims: 7, but the memory's embedder"):
        KgStore(memory, store_ns, index={"dims": 7})


async def test_scores_are_raw_cosine(memory: AsyncMemory, store_ns: str) -> None:
    opposite = KgStore(memory, store_ns, index={"dims": 3, "embed": lambda texts: [
        [-1.0, 0.0, 0.0] if t == "down" else [1.0, 0.0, 0.0] for t in texts], "fields": ["w"]})
    await opposite.aput(("s",), "up", {"w": "up"})
    [hit] = await opposite.asearch(("s",), query="down")
    assert hit.score == pytest.approx(-1.0)  # Neo4j's (1 + cos) / 2 would say 0

    store = KgStore(memory, store_ns + "-m")  # the memory's own embedder over "$" (the value as JSON)
    value = {"text": "Maya moved to Lisbon in May"}
    await store.aput(("s",), "k", value)
    [hit] = await store.asearch(("s",), query="where does Maya live?")
    a, b = np.array(memory.embedder.embed(get_text_at_path(value, "$") + ["where does Maya live?"]))
    assert hit.score == pytest.approx(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)), abs=1e-4)
    await memory.delete_namespace(store_ns + "-m")


async def test_an_unknown_filter_operator_is_refused_with_langgraphs_error(memory: AsyncMemory, store_ns: str) -> None:
    store = KgStore(memory, store_ns)
    await store.aput(("f",), "k", {"n": 1, "meta": {"level": 2}})
    with pytest.raises(ValueError, match=r"Unsupported operator: \$in"):
        await store.asearch(("f",), filter={"n": {"$in": [1, 2]}})
    assert [i.key for i in await store.asearch(("f",), filter={"meta.level": {"$gt": 1}})] == ["k"]
    assert await store.asearch(("f",), filter={"missing": {"$gt": 1}}) == []  # does not compare: no match


# -- TTL -------------------------------------------------------------------------------------------
async def test_ttl_expiry_refresh_omission_and_the_sweep_job(memory: AsyncMemory, store_ns: str) -> None:
    store = KgStore(memory, store_ns, ttl={"default_ttl": 10, "refresh_on_read": True})
    await store.aput(("t",), "short", {"text": "expires"})
    await store.aput(("t",), "forever", {"text": "stays"}, ttl=None)
    minutes = "MATCH (i:StoreItem {namespace: $ns, key: $key}) RETURN duration.inSeconds(datetime(), i.expires_at).seconds / 60.0"
    assert 9.9 < await cypher_value(memory, minutes, ns=store_ns, key="short") <= 10
    assert await cypher_value(memory, minutes, ns=store_ns, key="forever") is None

    await cypher_rows(memory, "MATCH (i:StoreItem {namespace: $ns, key: 'short'}) "
                              "SET i.expires_at = datetime() + duration('PT30S')", ns=store_ns)
    assert await store.aget(("t",), "short", refresh_ttl=False) is not None
    assert await cypher_value(memory, minutes, ns=store_ns, key="short") < 1
    assert await store.aget(("t",), "short") is not None  # refresh_on_read: another 10 minutes
    assert await cypher_value(memory, minutes, ns=store_ns, key="short") > 9.9

    await cypher_rows(memory, "MATCH (i:StoreItem {namespace: $ns, key: 'short'}) "
                              "SET i.expires_at = datetime() - duration('PT1S')", ns=store_ns)
    assert await store.aget(("t",), "short") is not None  # expired, not swept yet: still there
    store.ttl_config["omit_expired"] = True  # type: ignore[index]
    assert await store.aget(("t",), "short") is None and [i.key for i in await store.asearch(("t",))] == ["forever"]

    for key, seconds_ago in {"a": 1, "short": 2, "b": 3, "c": 4, "forever": 5}.items():  # "short" on the first page
        if key not in ("short", "forever"):
            await store.aput(("t",), key, {"text": key})
        await cypher_rows(memory, "MATCH (i:StoreItem {namespace: $ns, key: $key}) "
                                  "SET i.updated_at = datetime() - duration({seconds: $s})", ns=store_ns, key=key,
                          s=seconds_ago)
    pages = [await store.asearch(("t",), limit=2, offset=offset) for offset in (0, 2, 4)]
    assert [[i.key for i in page] for page in pages] == [["a", "b"], ["c", "forever"], []]  # left out before paging

    queue = JobQueue(memory.store, FAST)
    assert await run_sweep(memory, queue, "store_ttl", namespace=store_ns) == 1
    report = await Worker(memory, settings=FAST, namespace=store_ns).drain()
    assert len(report.done) == 1
    assert sorted(await cypher_value(memory, "MATCH (i:StoreItem {namespace: $ns}) RETURN collect(i.key)",
                                     ns=store_ns)) == ["a", "b", "c", "forever"]
    assert await run_sweep(memory, queue, "store_ttl", namespace=store_ns) == 0


async def test_the_stores_own_sweeper(memory: AsyncMemory, store_ns: str) -> None:
    store = KgStore(memory, store_ns, ttl={"default_ttl": 1, "sweep_interval_minutes": 0.002})
    await store.aput(("t",), "k", {"text": "soon gone"})
    await cypher_rows(memory, "MATCH (i:StoreItem {namespace: $ns}) SET i.expires_at = datetime() - duration('PT1S')",
                      ns=store_ns)
    assert await store.start_ttl_sweeper() and not await store.start_ttl_sweeper()  # one at a time
    for _ in range(200):  # it sweeps every 0.12 s
        if await count(memory, store_ns) == 0:
            break
        await asyncio.sleep(0.05)
    assert await count(memory, store_ns) == 0
    assert await store.stop_ttl_sweeper() and not store.stop_ttl_sweeper()


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
