"""Raw Cypher for tests that read or set the stored graph directly: one way, shared by every module."""

from __future__ import annotations

from typing import Any

from kg import AsyncMemory


async def cypher_rows(memory: AsyncMemory, query: str, /, **params: Any) -> list[dict[str, Any]]:
    """The rows of `query` (run in one managed transaction, on the memory's database), as dicts."""
    records, _, _ = await memory.store.driver.execute_query(query, params, database_=memory.store.database)
    return [r.data() for r in records]


async def cypher_value(memory: AsyncMemory, query: str, /, **params: Any) -> Any:
    """The one value of a query that returns one row of one column, such as a count."""
    [row] = await cypher_rows(memory, query, **params)
    [value] = row.values()
    return value
