"""Each framework door's example (examples/*.py) runs against the real Neo4j in a namespace of its own
and shows what its docs page says it shows: the earlier conversation found again."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sys
import uuid
from pathlib import Path

import pytest

from kg import Memory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SAID = "We picked TimescaleDB for the sensor data."
CASES = [  # example, the framework module it needs, what its last answer starts with and then holds
    ("langchain_chat", "langchain_core", "  From memory: ", SAID),
    ("openai_agents_session", "agents", "  Earlier you said: ", f"'{SAID}' (7 items of history)"),
    ("google_adk_memory", "google.adk", "  From memory: ", SAID),
    ("llamaindex_memory", "llama_index.core", "KgRetriever, 'who owns the ingestion service?': ",
     "Maya owns the ingestion service."),
    ("pydantic_ai_agent", "pydantic_ai", "  From memory: ", SAID),
    ("agent_framework_memory", "agent_framework", "  From memory: ", SAID),
    ("strands_agent", "strands", "  From memory: ", SAID),  # its own venv in .ci/run (Strands' mcp pin)
]


@pytest.mark.parametrize("name, needs, answer, recalled", CASES, ids=[c[0] for c in CASES])
def test_the_example_runs(sync_memory: Memory, name: str, needs: str, answer: str, recalled: str,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip(needs, reason=f"{needs} (the example's extra) is not installed")
    monkeypatch.syspath_prepend(str(EXAMPLES))  # as `python examples/<name>.py` has it: sensor_chat.py beside
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    sys.modules[name] = example
    spec.loader.exec_module(example)
    namespace = f"test-{uuid.uuid4().hex[:12]}"
    try:
        lines = example.run(sync_memory, namespace)
        lines = asyncio.run(lines) if inspect.iscoroutine(lines) else lines
    finally:
        for ns in (namespace, f"{namespace}.maya"):  # the ADK example keeps a namespace per user
            sync_memory.delete_namespace(ns)
    answers = [line for text in lines for line in text.splitlines() if line.startswith(answer)]
    assert answers and recalled in answers[-1], lines
