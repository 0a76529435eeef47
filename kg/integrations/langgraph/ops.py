"""One batch of LangGraph store operations, in one write transaction.

`KgStore` hands over a deduplicated batch with its vectors already made. As in LangGraph's own
stores, the reads (gets, searches, namespace listings) see the store as it was before the batch,
then the reads refresh the TTL of what they returned (`refresh_ttl`), then the writes (puts,
deletes) apply. Statements: `cypher/store_items/*.cypher`. Values are kept as JSON strings, so
filters are matched here, on the decoded value, never spliced into a query.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from kg.core.models.values import native
from kg.core.store.store import Store, Tx

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


@dataclass
class Batch:
    """What one transaction runs: the kg namespace, the operations, and the vectors made for them
    (`texts[i]`, `vectors[i]` for the i-th op when it is a put to index; `queries[i]` for a search)."""

    namespace: str
    ops: list[Op]
    omit_expired: bool = False
    texts: dict[int, list[str]] = field(default_factory=dict)
    vectors: dict[int, list[list[float]]] = field(default_factory=dict)
    queries: dict[int, list[float]] = field(default_factory=dict)


def item_id(namespace: str, path: tuple[str, ...], key: str) -> str:
    """An item's node id: the kg namespace, the LangGraph namespace tuple and the key."""
    return "si_" + hashlib.sha256(json.dumps([namespace, list(path), key]).encode()).hexdigest()[:32]


async def run(store: Store, batch: Batch) -> list[Result]:
    """The batch's results, in the order of its operations, from one write transaction."""

    async def work(tx: Tx) -> list[Result]:
        return await _run(tx, batch)

    return await store.transaction(work)


async def _run(tx: Tx, batch: Batch) -> list[Result]:
    ns, ops = batch.namespace, batch.ops
    results: list[Result] = [None] * len(ops)
    touched: list[str] = []  # items read with refresh_ttl
    gets = [(i, op) for i, op in enumerate(ops) if isinstance(op, GetOp)]
    if gets:
        rows = await tx.run("store_items/get", ids=[item_id(ns, op.namespace, op.key) for _, op in gets],
                            omit_expired=batch.omit_expired)
        found = {r["id"]: r for r in rows if r["value"] is not None}  # None: deleted while it was read
        for i, op in gets:
            row = found.get(item_id(ns, op.namespace, op.key))
            results[i] = _item(row) if row is not None else None
            if row is not None and op.refresh_ttl and row["ttl_ms"] is not None:
                touched.append(row["id"])
    for i, search in enumerate(ops):
        if isinstance(search, SearchOp):
            rows = await tx.run("store_items/under", namespace=ns, prefix=list(search.namespace_prefix),
                                vector=batch.queries.get(i), omit_expired=batch.omit_expired)
            page = _page(rows, search)
            results[i] = [_search_item(r) for r in page]
            if search.refresh_ttl:
                touched.extend(r["id"] for r in page if r["ttl_ms"] is not None)
    lists = [(i, op) for i, op in enumerate(ops) if isinstance(op, ListNamespacesOp)]
    if lists:
        rows = await tx.run("store_items/namespaces", namespace=ns, omit_expired=batch.omit_expired)
        paths = [tuple(r["path"]) for r in rows]
        for i, listing in lists:
            results[i] = list_namespaces(paths, listing)
    if touched:
        await tx.run("store_items/touch", ids=touched)
    puts = [(i, op) for i, op in enumerate(ops) if isinstance(op, PutOp)]
    gone = [item_id(ns, op.namespace, op.key) for _, op in puts if op.value is None]
    if gone:
        await tx.run("store_items/delete", ids=gone)
    items = [_row(batch, i, op) for i, op in puts if op.value is not None]
    if items:
        await tx.run("store_items/put", namespace=ns, items=items)
    return results


def _row(batch: Batch, i: int, op: PutOp) -> dict[str, Any]:
    vectors = batch.vectors.get(i) or []
    return {"id": item_id(batch.namespace, op.namespace, op.key), "path": list(op.namespace), "key": op.key,
            "value": json.dumps(op.value, default=str), "texts": batch.texts.get(i) or None,
            "vectors": [x for v in vectors for x in v] or None, "dims": len(vectors[0]) if vectors else None,
            "ttl_ms": round(op.ttl * 60_000) if op.ttl is not None else None}


def _item(row: dict[str, Any]) -> Item:
    return Item(namespace=tuple(row["path"]), key=row["key"], value=json.loads(row["value"]),
                created_at=native(row["created_at"]), updated_at=native(row["updated_at"]))


def _search_item(row: dict[str, Any]) -> SearchItem:
    return SearchItem(namespace=tuple(row["path"]), key=row["key"], value=json.loads(row["value"]),
                      created_at=native(row["created_at"]), updated_at=native(row["updated_at"]), score=row["score"])


def _page(rows: list[dict[str, Any]], op: SearchOp) -> list[dict[str, Any]]:
    """The rows of one search's page: filtered on the decoded value, then offset and limit."""
    conditions = op.filter or {}
    for wanted in conditions.values():
        check_operators(wanted)
    kept = [r for r in rows if r["value"] is not None  # None: deleted while it was read
            and all(matches(lookup(json.loads(r["value"]), key), wanted) for key, wanted in conditions.items())]
    return kept[op.offset:op.offset + op.limit]


# -- filters ------------------------------------------------------------------------------------
def check_operators(wanted: Any) -> None:
    """LangGraph's own error for an operator it does not define (`$in`, `$regex`, ...): refused, never
    read as a value that matches nothing."""
    if isinstance(wanted, dict):
        for key, value in wanted.items():
            if key.startswith("$") and key not in OPERATORS:
                raise ValueError(f"Unsupported operator: {key}")
            check_operators(value)


def lookup(value: Any, key: str) -> Any:
    """A filter key's value: the top-level key, else a dotted path into nested objects."""
    if not isinstance(value, dict):
        return None
    if key in value or "." not in key:
        return value.get(key)
    for part in key.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def matches(have: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (as its in-memory store): a dict of `$` operators compares, another
    dict matches nested keys, a list matches element by element, anything else by equality."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_compare(have, op, v) for op, v in wanted.items())
        return isinstance(have, dict) and all(matches(have.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return isinstance(have, (list, tuple)) and len(have) == len(wanted) and \
            all(matches(h, w) for h, w in zip(have, wanted))
    return _same(have, wanted)


def _same(have: Any, wanted: Any) -> bool:
    if isinstance(have, bool) or isinstance(wanted, bool):
        return have is wanted
    return bool(have == wanted)


def _compare(have: Any, op: str, wanted: Any) -> bool:
    if op == "$eq":
        return matches(have, wanted)
    if op == "$ne":
        return not matches(have, wanted)
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (have, wanted))
    if not numbers and not (isinstance(have, str) and isinstance(wanted, str)):
        return False  # a missing key, or values that do not compare (None > 3): no match
    if numbers and (math.isnan(have) or math.isnan(wanted)):
        return False
    if op == "$gt":
        return bool(have > wanted)
    if op == "$gte":
        return bool(have >= wanted)
    if op == "$lt":
        return bool(have < wanted)
    return bool(have <= wanted)  # $lte


# -- namespaces ---------------------------------------------------------------------------------
def list_namespaces(paths: list[tuple[str, ...]], op: ListNamespacesOp) -> list[tuple[str, ...]]:
    """The stored namespace tuples that meet every condition, cut to `max_depth`, sorted, paged."""
    chosen = [p for p in paths if all(_path_matches(c, p) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        chosen = [p[:op.max_depth] for p in chosen]
    return sorted(set(chosen))[op.offset:op.offset + op.limit]


def _path_matches(condition: MatchCondition, path: tuple[str, ...]) -> bool:
    """A prefix or suffix of whole labels; `*` stands for any one label."""
    pattern = tuple(condition.path)
    if len(pattern) > len(path):
        return False
    part = path[:len(pattern)] if condition.match_type == "prefix" else path[len(path) - len(pattern):]
    return all(p == "*" or p == q for p, q in zip(pattern, part))
