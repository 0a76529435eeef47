"""The CLI as a shell user meets it: user text with brackets printed as stored (Rich would read
it as markup), help texts that keep `[http]`, and `kg search` answered by a running `kg serve`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx

from kg import AsyncMemory
from tests.ports import free_port

REPO = Path(__file__).resolve().parents[1]
KG = [sys.executable, "-m", "kg.cli"]
STORED = "uv add psycopg[binary] and [bold]not bold[/bold]"


def kg(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KG, *args], capture_output=True, text=True, cwd=REPO, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


async def test_search_output_keeps_brackets(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "s1", [{"role": "user", "text": STORED, "speaker": "[dim]me",
                                              "ts": datetime(2025, 5, 1, tzinfo=timezone.utc)}])
    found = kg("search", "psycopg", "-n", namespace, "--recipe", "bm25", "--local")
    assert found.returncode == 0, found.stderr
    assert "psycopg[binary]" in found.stdout and "[bold]not bold[/bold]" in found.stdout, found.stdout
    assert "[dim]me" in found.stdout


def test_help_keeps_brackets() -> None:
    shown = kg("serve", "--help", timeout=120)
    assert shown.returncode == 0 and "[http]" in shown.stdout and "[schedules]" in shown.stdout, shown.stdout
    assert "[jobs]" in shown.stdout


async def test_search_goes_through_a_running_serve(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "s1", [{"role": "user", "text": STORED,
                                              "ts": datetime(2025, 5, 1, tzinfo=timezone.utc)}])
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "KG_HTTP__PORT": str(port), "KG_HTTP__HOST": "127.0.0.1"}
    serve = subprocess.Popen([*KG, "serve", "--no-schedule", "--no-work"], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert serve.poll() is None and time.monotonic() < deadline, "kg serve did not come up"
            time.sleep(0.5)
        found = kg("search", "psycopg", "-n", namespace, "--recipe", "bm25", env=env)
        assert found.returncode == 0, found.stderr
        assert f"through kg serve at http://127.0.0.1:{port}" in found.stderr
        assert "psycopg[binary]" in found.stdout
        missing = kg("search", "psycopg", "-n", namespace + "-nothing", env=env)
        assert missing.returncode == 2 and "holds no data" in missing.stderr
    finally:
        serve.terminate()
        serve.wait(timeout=60)
