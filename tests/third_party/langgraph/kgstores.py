"""What LangGraph's vendored store tests build in place of LangGraph's own stores (README.md here).

Every store is a `KgStore` in a kg namespace of its own, deleted after the test: over the test
session's `Memory` where the tests build a sync store (`InMemoryStore`, `SqliteStore`,
`PostgresStore`), over its `AsyncMemory` where they build an async one (`AsyncSqliteStore`,
`AsyncPostgresStore`). A backend's index configuration becomes KgStore's: SQLite's `text_fields` is
`fields`; the distance and the vector type (`distance_type`, `ann_index_config`) are dropped, since a
KgStore scores by cosine. `setup()` is a no-op (a memory migrates when it opens). The names of backend
internals that a few tests import are `None`: those tests are skipped (docs/langgraph.md).
"""

from __future__ import annotations

import inspect
import uuid
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Iterator

from kg import AsyncMemory, Memory
from kg.core.models.values import native
from kg.integrations.langgraph import KgStore
from kg.integrations.langgraph.ops import item_id
from tests.cypher_state import cypher_rows


@dataclass
class Stores:
    """The memories of the running test and the stores it made (the autouse fixture in conftest.py)."""

    sync: Memory
    async_: AsyncMemory
    made: list[KgStore] = field(default_factory=list)


CURRENT: Stores | None = None


def current() -> Stores:
    assert CURRENT is not None, "the tests/third_party/langgraph conftest fixture sets the test's memories"
    return CURRENT


def kg_index(index: dict[str, Any] | None) -> dict[str, Any] | None:
    """A LangGraph backend's index configuration as KgStore's."""
    if not index:
        return None
    out = {k: v for k, v in index.items() if k in ("dims", "embed", "fields")}
    if index.get("text_fields") is not None:
        out["fields"] = index["text_fields"]
    return out


def make(memory: Memory | AsyncMemory, index: dict[str, Any] | None = None, ttl: dict[str, Any] | None = None,
         cls: type[KgStore] = KgStore) -> Any:
    """A store in a fresh kg namespace, removed with the test."""
    options = {"index": kg_index(index), "ttl": ttl}
    accepted = inspect.signature(KgStore.__init__).parameters  # the same adapter measured KgStore before issue 34
    store = cls(memory, f"test-upstream-{uuid.uuid4().hex[:12]}", **{k: v for k, v in options.items() if k in accepted})
    current().made.append(store)
    return store


class _Store(KgStore):
    def setup(self) -> None:
        """LangGraph's database stores create their tables here; a memory migrates when it opens."""


class _AsyncStore(KgStore):
    async def setup(self) -> None:
        """As `_Store.setup`, awaited as the async stores' is."""


class InMemoryStore(_Store):
    """`InMemoryStore(index=..., ttl=...)` of the in-memory store's tests."""

    def __init__(self, *, index: dict[str, Any] | None = None, ttl: dict[str, Any] | None = None) -> None:
        options = {"index": kg_index(index), "ttl": ttl}
        accepted = inspect.signature(KgStore.__init__).parameters
        super().__init__(current().sync, f"test-upstream-{uuid.uuid4().hex[:12]}",
                         **{k: v for k, v in options.items() if k in accepted})
        current().made.append(self)


class SqliteStore:
    """`SqliteStore.from_conn_string(conn, index=...)`: the connection string names no place here."""

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, *, index: dict[str, Any] | None = None,
                         ttl: dict[str, Any] | None = None) -> Iterator[KgStore]:
        yield make(current().sync, index, ttl, _Store)


PostgresStore = SqliteStore


class AsyncSqliteStore:
    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str, *, index: dict[str, Any] | None = None,
                               ttl: dict[str, Any] | None = None) -> AsyncIterator[KgStore]:
        yield make(current().async_, index, ttl, _AsyncStore)


AsyncPostgresStore = AsyncSqliteStore
SqliteIndexConfig = dict  # a TypedDict in LangGraph: a plain dict at run time
VECTOR_TYPES = ["vector"]  # pgvector's storage types ("vector", "halfvec"): a KgStore has one

# Backend internals read by tests of the backends' own SQL (skipped: docs/langgraph.md).
NS_MATCH_FUNCTION = BaseSqliteStore = _escape_glob_literal = _escape_like_literal = _namespace_match_pattern = None
_ainternal = None


# The rows the Postgres tests' helpers read and backdate with SQL, as (:StoreItem) nodes.
EXPIRE_NOW = "MATCH (i:StoreItem {id: $id}) SET i.expires_at = datetime() - duration('PT1M')"
ROW = "MATCH (i:StoreItem {id: $id}) RETURN i.expires_at AS expires_at"


async def aexpire_now(store: KgStore, namespace: tuple[str, ...], key: str) -> None:
    await cypher_rows(store.memory, EXPIRE_NOW, id=item_id(store.namespace, namespace, key))


async def arow(store: KgStore, namespace: tuple[str, ...], key: str) -> dict[str, Any] | None:
    rows = await cypher_rows(store.memory, ROW, id=item_id(store.namespace, namespace, key))
    return {k: native(v) for k, v in rows[0].items()} if rows else None


def expire_now(store: KgStore, namespace: tuple[str, ...], key: str) -> None:
    current().sync._run(aexpire_now(store, namespace, key))


def row(store: KgStore, namespace: tuple[str, ...], key: str) -> dict[str, Any] | None:
    return current().sync._run(arow(store, namespace, key))
