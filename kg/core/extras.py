"""Optional extras: a door that needs a package only some users install says which extra brings it.

`require("server", "fastapi", "uvicorn")` raises an `ImportError` naming
`pip install 'kg-memory[server]'` when one of the modules is missing; call it before importing them.
"""

from __future__ import annotations

import importlib.util

EXTRAS = {
    "server": "the HTTP API, MCP and `kg serve`",
    "clustering": "the nightly clustering of corrections",
    "graphiti": "`kg import graphiti`",
    "voyage": "Voyage AI embeddings",
    "langgraph": "the LangGraph store",
    "torch": "sentence-transformers models on torch (the embedder and the cross-encoder reranker)",
    "otel": "OpenTelemetry tracing",
}


class MissingExtra(ImportError):
    pass


def require(extra: str, *modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtra(f"{', '.join(missing)} is not installed: {EXTRAS[extra]} needs the optional extra "
                           f"`{extra}` (pip install 'kg-memory[{extra}]')", name=missing[0])
