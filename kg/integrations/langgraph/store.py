"""`KgStore`, LangGraph's long-term store (`BaseStore`) over kg-memory: docs/langgraph.md.

    store = KgStore(memory, namespace="agent-x")       # memory: a Memory or an AsyncMemory
    graph = builder.compile(store=store)

Every call, sync or async, from any thread, is queued to the event loop that owns the memory's
database connection. The calls queued while a batch runs make the next batch, deduplicated and run
in one write transaction (`ops.run`; up to `BATCH_OPS` operations), the way LangGraph's
`AsyncBatchedBaseStore` batches: so a
store over an `AsyncMemory` serves the sync graph nodes LangGraph runs in threads, and ten thousand
concurrent calls are a few transactions, not ten thousand connections. A batch that fails is run
again caller by caller, so a bad call fails alone and a failed call leaves nothing written.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections import deque
from typing import Any, Generator, Generic, Iterable, TypeVar, Union

from kg.core.extras import require
from kg.core.models.turns import check_namespace

require("langgraph", "langgraph")

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import ensure_embeddings, get_text_at_path

from kg.async_memory import AsyncMemory
from kg.core.embedders.base import embed_async
from kg.integrations.langgraph import ops as store_ops
from kg.jobs.kinds import expire_store_items
from kg.memory import Memory

BATCH_OPS = 2000  # operations of one transaction at most (a call's own operations are never split)
INDEX_KEYS = ("dims", "embed", "fields")
log = logging.getLogger(__name__)
TTL_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired")
T = TypeVar("T")
Waiter = Union["asyncio.Future[list[Result]]", "concurrent.futures.Future[list[Result]]"]


class MemoryEmbeddings(Embeddings):
    """The memory's own embedder as LangChain `Embeddings`: what a `KgStore` embeds with when its
    `index` brings no `embed`."""

    def __init__(self, memory: AsyncMemory) -> None:
        self.memory = memory

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.memory.embedder.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.memory.embedder.embed([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await embed_async(self.memory.embedder, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return (await embed_async(self.memory.embedder, [text]))[0]


class Done(Generic[T]):
    """A result that is ready and can also be awaited: the TTL sweeper's start and stop serve code
    written for LangGraph's sync stores (`store.stop_ttl_sweeper()`) and for its async ones
    (`await store.stop_ttl_sweeper()`) alike."""

    def __init__(self, value: T) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, T]:
        return self._ready().__await__()

    async def _ready(self) -> T:
        return self.value

    def __bool__(self) -> bool:
        return bool(self.value)


class KgStore(BaseStore):
    """LangGraph's long-term store over kg-memory: each item one `(:StoreItem)` node of the kg
    `namespace` given here. `index` is LangGraph's (`dims`, `embed`, `fields`; default: the memory's
    embedder over `["$"]`); `ttl` is LangGraph's `TTLConfig`. Sync and async calls both work over a
    `Memory` or an `AsyncMemory` (sync calls from the AsyncMemory's own event loop are refused, as
    LangGraph's async stores refuse them: use the async calls there)."""

    supports_ttl = True

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, *, index: IndexConfig | None = None,
                 ttl: TTLConfig | None = None) -> None:
        self.memory: AsyncMemory = memory._async if isinstance(memory, Memory) else memory
        loop = self.memory.loop
        if loop is None:
            raise ValueError("memory: not open; open it first (`with Memory() as memory` / `async with AsyncMemory()`)")
        self._loop: asyncio.AbstractEventLoop = loop
        self.namespace = check_namespace(namespace)
        self.index_config, self.embeddings = self._index(dict(index or {}))
        self.ttl_config = _ttl(ttl)
        self._pending: deque[tuple[Waiter, list[Op]]] = deque()
        self._drainer: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None

    def _index(self, index: dict[str, Any]) -> tuple[dict[str, Any], Embeddings]:
        unknown = sorted(set(index) - set(INDEX_KEYS))
        if unknown:
            raise ValueError(f"index: unknown key {unknown[0]!r}; KgStore takes {', '.join(INDEX_KEYS)} "
                             "(it scores by cosine, on one kind of vector)")
        fields = index.get("fields") or ["$"]
        if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
            raise ValueError(f"index.fields: expected a list of field paths such as ['text', 'tags[*]'], got {fields!r}")
        dims, embed = index.get("dims"), index.get("embed")
        if embed is None:
            own = self.memory.embedder
            if dims is not None and dims != own.dim:
                raise ValueError(f"index.dims: {dims}, but the memory's embedder {own.name} makes vectors of "
                                 f"{own.dim}; give `embed` to use another embedder")
            embeddings: Embeddings = MemoryEmbeddings(self.memory)
            return {"dims": own.dim, "embed": embeddings, "fields": fields}, embeddings
        if not isinstance(dims, int) or dims < 1:
            raise ValueError(f"index.dims: the size of the vectors `embed` makes (a positive integer), got {dims!r}")
        return {"dims": dims, "embed": embed, "fields": fields}, ensure_embeddings(embed)

    # -- BaseStore: every operation goes through batch or abatch ----------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        todo = _checked(ops)
        if self._on_loop():
            raise asyncio.InvalidStateError(
                "Synchronous calls to KgStore detected in the event loop of its AsyncMemory: they would block "
                "the loop that serves them. Use the async calls there (`await store.aget(...)` for "
                "`store.get(...)`), or call from a thread, as LangGraph does for sync nodes.")
        if not todo:
            return []
        waiter: concurrent.futures.Future[list[Result]] = concurrent.futures.Future()
        self._submit(waiter, todo)
        return waiter.result()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        todo = _checked(ops)
        if not todo:
            return []
        if self._on_loop():
            here: asyncio.Future[list[Result]] = self._loop.create_future()
            self._enqueue(here, todo)
            return await here
        waiter: concurrent.futures.Future[list[Result]] = concurrent.futures.Future()
        self._submit(waiter, todo)
        return await asyncio.wrap_future(waiter)

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def _submit(self, waiter: Waiter, todo: list[Op]) -> None:
        self._on_memory_loop(lambda: self._enqueue(waiter, todo), wait=False)

    # -- the batches --------------------------------------------------------------------------------
    def _enqueue(self, waiter: Waiter, todo: list[Op]) -> None:
        self._pending.append((waiter, todo))
        if self._drainer is None or self._drainer.done():
            self._drainer = self._loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._pending:
            taken: list[tuple[Waiter, list[Op]]] = []
            size = 0
            while self._pending and (not taken or size + len(self._pending[0][1]) <= BATCH_OPS):
                waiter, todo = self._pending.popleft()
                if not waiter.done():  # done: cancelled meanwhile
                    taken.append((waiter, todo))
                    size += len(todo)
            if not taken:
                continue
            try:
                results = await self._execute([op for _, todo in taken for op in todo])
            except Exception as exc:  # noqa: BLE001 - each caller gets its own answer below
                if len(taken) == 1:
                    _settle(taken[0][0], error=exc)
                    continue
                for waiter, todo in taken:  # each alone, so that a bad call fails alone
                    try:
                        _settle(waiter, await self._execute(todo))
                    except Exception as alone:  # noqa: BLE001 - handed to its caller
                        _settle(waiter, error=alone)
                continue
            except BaseException as exc:  # cancelled with the loop: nobody waits for ever
                for waiter, _ in taken:
                    _settle(waiter, error=RuntimeError(f"KgStore: the batch was cancelled ({type(exc).__name__})"))
                raise
            at = 0
            for waiter, todo in taken:
                _settle(waiter, results[at:at + len(todo)])
                at += len(todo)

    async def _execute(self, todo: list[Op]) -> list[Result]:
        unique, where = _dedupe(todo)
        batch = store_ops.Batch(self.namespace, unique, omit_expired=bool((self.ttl_config or {}).get("omit_expired")))
        texts = {i: self._texts(op) for i, op in enumerate(unique) if isinstance(op, PutOp) and op.value is not None}
        batch.texts = {i: t for i, t in texts.items() if t}
        flat = [t for group in batch.texts.values() for t in group]
        if flat:
            vectors = self._sized(await self.embeddings.aembed_documents(flat))
            at = 0
            for i, group in batch.texts.items():
                batch.vectors[i] = vectors[at:at + len(group)]
                at += len(group)
        queries = {op.query for op in unique if isinstance(op, SearchOp) and op.query}
        if queries:
            ordered = sorted(queries)
            made = self._sized(list(await asyncio.gather(*(self.embeddings.aembed_query(q) for q in ordered))))
            by_query = dict(zip(ordered, made))
            batch.queries = {i: by_query[op.query] for i, op in enumerate(unique) if isinstance(op, SearchOp) and op.query}
        results = await store_ops.run(self.memory.store, batch)
        return [results[i] for i in where]

    def _texts(self, op: PutOp) -> list[str]:
        """What a put embeds: each text its fields reach (the store's, or the put's own `index`)."""
        if op.index is False or op.value is None:
            return []
        fields = self.index_config["fields"] if op.index is None else list(op.index)
        return [text for path in fields for text in get_text_at_path(op.value, path) if text.strip()]

    def _sized(self, vectors: list[list[float]]) -> list[list[float]]:
        dims = self.index_config["dims"]
        for vector in vectors:
            if len(vector) != dims:
                raise ValueError(f"index.dims: {dims}, but `embed` made a vector of {len(vector)}")
        return [list(map(float, v)) for v in vectors]

    # -- TTL ----------------------------------------------------------------------------------------
    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Done[bool]:
        """Delete this store's expired items every `sweep_interval_minutes` (default: the TTL config's,
        else 5), on the memory's event loop, until `stop_ttl_sweeper`. `kg serve` sweeps every kg
        namespace on its own schedule (`[schedules.store_ttl]`); this is for a process without it.
        True when this call started it. Call it, or await it, as LangGraph's sync or async stores."""
        minutes = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if minutes <= 0:
            raise ValueError(f"sweep_interval_minutes: must be positive, got {minutes!r}")

        def start() -> bool:
            if self._sweeper is not None and not self._sweeper.done():
                return False
            self._sweeper = self._loop.create_task(self._sweep(minutes * 60))
            return True

        return Done(self._on_memory_loop(start))

    def stop_ttl_sweeper(self, timeout: float | None = None) -> Done[bool]:
        """Stop the sweeper `start_ttl_sweeper` started; True if one was running."""
        def stop() -> bool:
            running = self._sweeper is not None and not self._sweeper.done()
            if self._sweeper is not None:
                self._sweeper.cancel()
            self._sweeper = None
            return running

        return Done(self._on_memory_loop(stop))

    async def _sweep(self, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                await expire_store_items(self.memory.store, self.namespace)
            except Exception as exc:  # noqa: BLE001 - the database may be down for a while: sweep next time
                log.warning("the TTL sweep of store namespace %s failed (%s: %s); next in %.0f s",
                            self.namespace, type(exc).__name__, exc, every_s)

    def _on_memory_loop(self, work: Any, wait: bool = True) -> Any:
        """`work()` run on the memory's event loop (at once when called there), its result."""
        if self._on_loop():
            return work()
        if not self._loop.is_running():  # nobody would ever run `work`
            raise RuntimeError("KgStore: the event loop of its AsyncMemory is not running, so a call from another "
                               "thread cannot be served; call from that loop (the async calls), or use a Memory")
        if not wait:
            self._loop.call_soon_threadsafe(work)
            return None
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def call() -> None:
            try:
                future.set_result(work())
            except Exception as exc:  # noqa: BLE001 - raised in the caller's thread
                future.set_exception(exc)

        self._loop.call_soon_threadsafe(call)
        return future.result()


def _ttl(ttl: TTLConfig | None) -> TTLConfig | None:
    if ttl is None:
        return None
    unknown = sorted(set(ttl) - set(TTL_KEYS))
    if unknown:
        raise ValueError(f"ttl: unknown key {unknown[0]!r}; KgStore takes {', '.join(TTL_KEYS)}")
    for key in ("default_ttl", "sweep_interval_minutes"):
        value = ttl.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise ValueError(f"ttl.{key}: minutes, a positive number, got {value!r}")
    return ttl


def _checked(ops: Iterable[Op]) -> list[Op]:
    """The operations of one call, checked before they join a batch: an unknown filter operator
    fails its own call with LangGraph's error, not the batch it would have joined."""
    todo = list(ops)
    for op in todo:
        if isinstance(op, SearchOp):
            for wanted in (op.filter or {}).values():
                store_ops.check_operators(wanted)
        elif not isinstance(op, (GetOp, PutOp, ListNamespacesOp)):
            raise TypeError(f"unknown store operation {type(op).__name__}")
    return todo


def _dedupe(todo: list[Op]) -> tuple[list[Op], list[int]]:
    """The distinct operations, and where each given one's result is among them: the same read asked
    twice is read once; puts to one key collapse into the last (as `AsyncBatchedBaseStore` does)."""
    unique: list[Op] = []
    where: list[int] = []
    seen: dict[Any, int] = {}
    for op in todo:
        key: Any = ("put", op.namespace, op.key) if isinstance(op, PutOp) else (type(op).__name__, repr(op))
        if key in seen:
            if isinstance(op, PutOp):
                unique[seen[key]] = op
        else:
            seen[key] = len(unique)
            unique.append(op)
        where.append(seen[key])
    return unique, where


def _settle(waiter: Waiter, result: list[Result] | None = None, error: BaseException | None = None) -> None:
    if waiter.done():
        return
    try:
        if error is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(result if result is not None else [])
    except (asyncio.InvalidStateError, concurrent.futures.InvalidStateError):
        pass  # cancelled by its caller at this very moment
