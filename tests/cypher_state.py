"""Raw Cypher for tests that read or set the stored graph directly: one way, shared by every module."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kg import AsyncMemory
from kg.core.telemetry.hooks import add_observer, remove_observer


async def cypher_rows(memory: AsyncMemory, query: str, /, **params: Any) -> list[dict[str, Any]]:
    """The rows of `query` (run in one managed transaction, on the memory's database), as dicts."""
    records, _, _ = await memory.store.driver.execute_query(query, params, database_=memory.store.database)
    return [r.data() for r in records]


async def cypher_value(memory: AsyncMemory, query: str, /, **params: Any) -> Any:
    """The one value of a query that returns one row of one column, such as a count."""
    [row] = await cypher_rows(memory, query, **params)
    [value] = row.values()
    return value


class StatementCount:
    """An observer (`kg.core.telemetry.hooks`) counting the statements run, by name."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def statement(self, name: str, seconds: float) -> None:
        self.counts[name] += 1

    def embed(self, kind: str, seconds: float) -> None: ...

    def llm(self, purpose: str, seconds: float, input_tokens: int, output_tokens: int) -> None: ...

    def job(self, kind: str, outcome: str, seconds: float) -> None: ...


@contextmanager
def statements_counted() -> Iterator[Counter[str]]:
    """The statements run inside the block, by name."""
    seen = StatementCount()
    add_observer(seen)
    try:
        yield seen.counts
    finally:
        remove_observer(seen)
