"""Optional extras: a door that needs a package only some users install says which extra brings it.

`require("server", "fastapi", "uvicorn")` raises an `ImportError` naming
`pip install 'kg-memory[server]'` when one of the modules is missing; call it before importing them.
"""

from __future__ import annotations

import importlib.util

DISTRIBUTION = "kg-memory"

EXTRAS = {
    "server": "the HTTP API, MCP and `kg serve`",
    "clustering": "the nightly clustering of corrections",
    "graphiti": "`kg import graphiti`",
    "voyage": "Voyage AI embeddings",
    "langgraph": "the LangGraph store",
    "langchain": "the LangChain chat history and retriever",
    "openai-agents": "the OpenAI Agents SDK session",
    "google-adk": "the Google ADK memory service",
    "llamaindex": "the LlamaIndex memory block and retriever",
    "pydantic-ai": "the PydanticAI message history and memory tool",
    "agent-framework": "the Microsoft Agent Framework history and context providers",
    "strands": "the Strands Agents session manager and memory tool",
    "rerank": "the bundled cross-encoder of the rerank stage (ms-marco-MiniLM-L-12-v2, int8 ONNX)",
    "torch": "sentence-transformers models on torch (the embedder, and cross-encoders by name)",
    "otel": "OpenTelemetry tracing",
}


class MissingExtra(ImportError):
    pass


def package_version() -> str:
    """The installed distribution's version, as the doors report it."""
    import importlib.metadata  # here: `kg --help` does not read the distributions' metadata

    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # a checkout on sys.path, never installed
        return "0+unknown"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # `a.b` when `a` itself is missing: find_spec imports the parent first
        return False


def require(extra: str, *modules: str) -> None:
    missing = [m for m in modules if not _installed(m)]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise MissingExtra(f"{', '.join(missing)} {verb} not installed: {EXTRAS[extra]} needs the optional extra "
                           f"`{extra}` (pip install '{DISTRIBUTION}[{extra}]')", name=missing[0])
