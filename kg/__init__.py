"""kg-memory: long-term, bi-temporal conversational memory for AI agents, on Neo4j.

`from kg import Memory` (or `AsyncMemory`, `Client`, `AsyncClient`) is the way in; the types those
take and return (`Message`, `Recipe`, `RankedTurn`, `FactView`...) and the errors to catch are
importable from here too. `__all__` is the public surface (`tests/test_exported_members.py`).
"""

from __future__ import annotations

import importlib
import pathlib
import typing

from kg import _checkout

_checkout.install(pathlib.Path(__file__).parent)

if typing.TYPE_CHECKING:
    from kg.client import (
        AccessDenied,
        AsyncClient,
        Client,
        ClientError,
        InvalidRequest,
        NotFound,
        ServerError,
        Unavailable,
    )
    from kg.core.settings.tree import Settings, load_settings
    from kg.memory import AsyncMemory, Memory
    from kg.types import *  # noqa: F403 - the same names as kg.types.__all__, listed below

__all__ = [
    "AccessDenied", "AsyncClient", "AsyncMemory", "Attachment", "Boosts", "ChangeResult", "Changes",
    "CitedDecision", "CitedSignal", "Client", "ClientError", "ClusterReport", "ClusterView", "ConfidenceParts",
    "CoreRules", "CorrectionChange", "CorrectionResult", "CorrectionView", "Erasure", "Explanation",
    "ExportFormatError", "FactChange", "FactView", "FieldError", "HeldMerge", "ImportReport", "IndexReport",
    "IngestReport", "InvalidRequest", "Job", "MaintenanceReport", "Memory", "MemoryHit", "MergeReport",
    "Message", "NotFound", "QuotedTurn", "RECIPES", "RankedTurn", "Recipe", "RelateResult", "RelationshipView",
    "RememberResult", "RunReport", "ServerError", "Session", "SessionHit", "SessionIndexReport",
    "SessionSignals", "Settings", "StatementEvent", "StatusChange", "Summary", "Turn", "Unavailable",
    "load_settings",
]

# Loaded on first use: the facade imports the write and read paths and the driver, the client httpx, which
# a door like `kg --help` or `kg neo4j start` does not need; the types and the settings tree (pydantic-settings)
# are cheaper but not needed either.
_HOMES = {"Settings": "kg.core.settings.tree", "load_settings": "kg.core.settings.tree",
          "AsyncMemory": "kg.memory", "Memory": "kg.memory", "AccessDenied": "kg.client", "AsyncClient": "kg.client",
          "Client": "kg.client", "ClientError": "kg.client", "InvalidRequest": "kg.client", "NotFound": "kg.client",
          "ServerError": "kg.client", "Unavailable": "kg.client"}


def __getattr__(name: str) -> typing.Any:
    if name in __all__:
        return getattr(importlib.import_module(_HOMES.get(name, "kg.types")), name)
    raise AttributeError(f"module 'kg' has no attribute {name!r}")
