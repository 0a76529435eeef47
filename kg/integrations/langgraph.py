"""A LangGraph `BaseStore` backed by the memory (`pip install 'kg-memory[langgraph]'`).

    store = KgStore(memory, namespace="agent-x")     # memory: a Memory (sync + async) or an AsyncMemory
    graph = builder.compile(store=store)

Mapping: every item is one `(:StoreItem)` node in the kg namespace given here (the tenant: it is
deleted with the namespace and never seen by another one). The LangGraph namespace tuple is its
`path` (a list), the key its `key`, the value a JSON string. Items are embedded with the memory's
embedder at `put` time: the text at the store's `fields` (default `["$"]`: every string in the
value), or the put's own `index` list; `index=False` stores no vector. `search(prefix, query=...)`
ranks the items under the prefix by cosine to the query (exact, in Cypher); without a query,
newest first. `filter` matches values by equality or `$eq $ne $gt $gte $lt $lte`. TTLs are not
supported. Statements: `cypher/queries/store_*.cypher`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence, cast

from kg.core.extras import require
from kg.core.values import native

require("langgraph", "langgraph")

from langgraph.store.base import (  # noqa: E402 - after the check that names the extra
    BaseStore, GetOp, Item, ListNamespacesOp, MatchCondition, Op, PutOp, Result, SearchItem, SearchOp,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path  # noqa: E402
from kg.core.embeddings import embed_async

if TYPE_CHECKING:
    from kg.memory import AsyncMemory, Memory

OPERATORS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: a > b,
             "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


class KgStore(BaseStore):
    """LangGraph's long-term store over kg-memory. With a `Memory`, both the sync (`put`, `get`,
    `search`, ...) and async (`aput`, ...) calls work; with an `AsyncMemory`, the async ones."""

    supports_ttl = False

    def __init__(self, memory: Memory | AsyncMemory, namespace: str, fields: Sequence[str] = ("$",)) -> None:
        self._sync = cast("Memory", memory) if hasattr(memory, "_run") else None
        self.memory: AsyncMemory = self._sync._async if self._sync is not None else cast("AsyncMemory", memory)
        self.namespace = namespace
        self.fields = list(fields)

    # -- BaseStore ----------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self._sync is None:
            raise TypeError("KgStore over an AsyncMemory serves the async calls (aput, aget, asearch, ...); "
                            "give it a Memory for the sync ones")
        return self._sync._run(self._batch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        work = self._batch(list(ops))
        if self._sync is None:
            return await work
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._sync._loop))

    # -- the operations -------------------------------------------------------------------------------
    async def _batch(self, ops: list[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:  # in order: a get after a put in one batch sees the put
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    def _id(self, path: tuple[str, ...], key: str) -> str:
        return "si_" + hashlib.sha256(json.dumps([self.namespace, list(path), key]).encode()).hexdigest()[:32]

    async def _get(self, op: GetOp) -> Item | None:
        rows = await self.memory.store.read("queries/store_items_get", ids=[self._id(op.namespace, op.key)])
        return _item(rows[0]) if rows else None

    async def _put(self, op: PutOp) -> None:
        if op.value is None:
            await self.memory.store.write("queries/store_items_delete", ids=[self._id(op.namespace, op.key)])
            return None
        text = self._text(op.value, op.index)
        vector = None
        if text:
            [vector] = await embed_async(self.memory.embedder, [text])
        item = {"id": self._id(op.namespace, op.key), "path": list(op.namespace), "key": op.key,
                "value": json.dumps(op.value, default=str), "text": text, "embedding": vector}
        await self.memory.store.write("queries/store_items_put", namespace=self.namespace, items=[item],
                                      now=datetime.now(timezone.utc))
        return None

    def _text(self, value: Mapping[str, Any], index: Any) -> str | None:
        if index is False:
            return None
        fields = self.fields if index is None else list(index)
        parts: list[str] = []
        for field in fields:
            parts.extend(_strings(value) if field == "$" else get_text_at_path(value, tokenize_path(field)))
        return " ".join(p for p in parts if p) or None

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        vector = None
        if op.query:
            [vector] = await embed_async(self.memory.embedder, [op.query])
        rows = await self.memory.store.read("queries/store_items_under", namespace=self.namespace,
                                            prefix=list(op.namespace_prefix), vector=vector)
        found = [row for row in rows if _matches(json.loads(row["value"]), op.filter or {})]
        return [SearchItem(namespace=tuple(r["path"]), key=r["key"], value=json.loads(r["value"]),
                           created_at=native(r["created_at"]), updated_at=native(r["updated_at"]),
                           score=r["score"]) for r in found[op.offset:op.offset + op.limit]]

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        rows = await self.memory.store.read("queries/store_namespaces", namespace=self.namespace)
        paths = {tuple(r["path"]) for r in rows}
        if op.max_depth is not None:
            paths = {p[:op.max_depth] for p in paths}
        chosen = sorted(p for p in paths if all(_path_matches(c, p) for c in op.match_conditions or ()))
        return chosen[op.offset:op.offset + op.limit]



def _item(row: dict[str, Any]) -> Item:
    return Item(namespace=tuple(row["path"]), key=row["key"], value=json.loads(row["value"]),
                created_at=native(row["created_at"]), updated_at=native(row["updated_at"]))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _matches(value: dict[str, Any], conditions: dict[str, Any]) -> bool:
    for key, wanted in conditions.items():
        have = value.get(key)
        if isinstance(wanted, dict) and wanted and all(k in OPERATORS for k in wanted):
            try:
                if not all(OPERATORS[k](have, v) for k, v in wanted.items()):
                    return False
            except TypeError:  # e.g. None > 3
                return False
        elif have != wanted:
            return False
    return True


def _path_matches(condition: MatchCondition, path: tuple[str, ...]) -> bool:
    pattern = tuple(condition.path)
    if len(pattern) > len(path):
        return False
    part = path[:len(pattern)] if condition.match_type == "prefix" else path[len(path) - len(pattern):]
    return all(p == "*" or p == q for p, q in zip(pattern, part))
