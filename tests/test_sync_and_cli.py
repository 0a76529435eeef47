"""The synchronous facade and the CLI, as a script or a shell user would drive them."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kg import AsyncMemory, Memory

pytestmark = pytest.mark.neo4j  # the sync facade and the CLI open the database themselves


def test_sync_memory_mirrors_async_api() -> None:
    public = {n for n, _ in inspect.getmembers(AsyncMemory, inspect.iscoroutinefunction) if not n.startswith("_")}
    assert public - {"close"} <= set(dir(Memory))
    assert inspect.signature(Memory.search_turns).parameters.keys() == \
        inspect.signature(AsyncMemory.search_turns).parameters.keys()
    ns = f"test-sync-{uuid.uuid4().hex[:8]}"
    with Memory() as memory:
        try:
            turn = memory.add_message(ns, "user", "I keep my notes in Obsidian", datetime(2025, 1, 1, tzinfo=timezone.utc))
            hits = memory.search_turns(ns, "note taking app", k=1)
            assert hits[0].turn.id == turn.id
        finally:
            memory.delete_namespace(ns)


def test_cli_ingest_reports_rejections_and_exits_nonzero(tmp_path: Path) -> None:
    ns = f"test-cli-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([
        json.dumps({"role": "user", "text": "first", "ts": "2025-01-01T10:00:00Z"}),
        "{not json",
        json.dumps({"role": "user", "text": "second", "ts": "2025-01-01T10:01:00Z"}),
    ]) + "\n")
    kg = [sys.executable, "-m", "kg.cli"]
    try:
        run = subprocess.run([*kg, "ingest", str(path), "--namespace", ns], capture_output=True, text=True)
        assert run.returncode == 1, run.stderr
        assert f"{path}:2" in run.stderr and "malformed JSON" in run.stderr
        assert "new turns 2" in run.stdout and "rejected 1" in run.stdout
        again = subprocess.run([*kg, "ingest", str(path), "--namespace", ns], capture_output=True, text=True)
        assert "new turns 0" in again.stdout and "already stored 2" in again.stdout
        found = subprocess.run([*kg, "search", "second", "-n", ns, "-r", "bm25"], capture_output=True, text=True)
        assert found.returncode == 0 and "second" in found.stdout and "bm25" in found.stdout
    finally:
        with Memory() as memory:
            memory.delete_namespace(ns)
