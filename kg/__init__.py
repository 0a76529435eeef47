"""kg-memory: long-term, bi-temporal conversational memory for AI agents, on Neo4j."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg import _checkout

_checkout.install(Path(__file__).parent)

from kg.core.settings.tree import Settings, load_settings

if TYPE_CHECKING:
    from kg.client import AsyncClient, Client
    from kg.memory import AsyncMemory, Memory

__all__ = ["AsyncClient", "AsyncMemory", "Client", "Memory", "Settings", "load_settings"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the facade imports the write and read paths and the driver, which a
    # door like `kg --help` or `kg neo4j start` does not need.
    if name in ("AsyncMemory", "Memory"):
        from kg import memory

        return getattr(memory, name)
    if name in ("AsyncClient", "Client"):
        from kg import client

        return getattr(client, name)
    raise AttributeError(f"module 'kg' has no attribute {name!r}")
