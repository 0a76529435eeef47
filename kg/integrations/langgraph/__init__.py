"""LangGraph's long-term store over kg-memory, `KgStore` (`pip install 'kg-memory[langgraph]'`):
`store.py` is the store (its calls, batches and TTL sweeper), `ops.py` runs one batch of operations
in one transaction. docs/langgraph.md."""

from kg.integrations.langgraph.store import KgStore, MemoryEmbeddings

__all__ = ["KgStore", "MemoryEmbeddings"]
