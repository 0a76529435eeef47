"""A coding agent's memory, automatic (docs/coding-agents.md): Claude Code's hooks, recorded as they
fire in a session (tests/fixtures/hooks/claude-code-session.jsonl: session start, two prompts and
their answers, a tool event, session end), each fed to `kg hook claude-code` as a process of its own,
with a `kg serve` running: one closed session with its four turns, which the service's jobs then
summarize and index with no other call. The second answer comes from the transcript, as with Claude
Code versions whose Stop hook carries no `last_assistant_message`. The plugin's files are checked too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from kg import Memory, load_settings
from tests.cypher_state import cypher_value
from tests.ports import free_port

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "tests" / "fixtures" / "hooks"
PLUGIN = REPO / "examples" / "claude-code-plugin"
SESSION = "9d3f6c2a-4b1e-4f7a-9c8d-2e5f1a7b3c6d"


def wait_for(what: str, check, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.5)


def test_a_recorded_claude_code_session_is_recorded_closed_and_indexed_by_kg_serve() -> None:
    namespace = f"test-hooks-{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = dict(os.environ, KG_HTTP__HOST="127.0.0.1", KG_HTTP__PORT=str(port),
               KG_SCHEDULES__SUMMARIZE__EVERY_S="0.5", KG_SCHEDULES__INDEX__EVERY_S="0.5", KG_JOBS__POLL_S="0.2",
               KG_MEMORY__INDEXING__BACKEND="offline")

    def hook(payload: dict | str) -> subprocess.CompletedProcess[str]:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        return subprocess.run([sys.executable, "-m", "kg.cli", "hook", "claude-code", "-n", namespace], input=text,
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300)

    serve = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "-n", namespace], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def up() -> bool:
            assert serve.poll() is None, "kg serve exited"
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for("kg serve's /health", up)
        for line in (HOOKS / "claude-code-session.jsonl").read_text().splitlines():
            done = hook(json.loads(line))
            assert done.returncode == 0, (line, done.stderr)
            assert done.stdout == ""  # SessionStart: no rules in this namespace yet

        with Memory(load_settings()) as memory:
            session = memory.session(namespace, SESSION)
            assert session is not None and session.status == "closed"
            assert [(t.role, t.text) for t in memory.turns(namespace, SESSION)] == [
                ("user", "We moved the sensor readings from InfluxDB to TimescaleDB last week. Update the ingest docs."),
                ("assistant", "Updated docs/ingest.md: the readings now go to TimescaleDB (90-day retention); "
                              "InfluxDB is gone."),
                ("user", "Also note that Ana from the data team owns the ingest job now."),
                ("assistant", "Noted in docs/ingest.md: Ana (data team) owns the ingest job."),  # from the transcript
            ]
            assert [s.id for s in memory.sessions(namespace)] == [SESSION]  # one session, Claude Code's id

            def indexed() -> bool:
                return any(j.kind == "index_session" and j.target == SESSION and j.status == "done"
                           for j in memory.jobs(namespace=namespace))

            wait_for("the index_session job of kg serve", indexed)
            assert [s.kind for s in memory.summaries(namespace, SESSION)] == ["session"]
            version = memory._run(cypher_value(memory._async, "MATCH (s:Session {namespace: $ns, id: $id}) "
                                                                "RETURN s.extraction_version", ns=namespace, id=SESSION))
            assert version and version.startswith("offline:")  # indexed by the configured (offline) extractor

            correction = memory.add_correction(namespace, SESSION, "Run make docs after editing the docs.",
                                               correction_type="process")
            memory.confirm_rule(namespace, correction.correction_id)
        start = hook({"session_id": str(uuid.uuid4()), "hook_event_name": "SessionStart", "source": "startup"})
        assert start.returncode == 0 and "Run make docs after editing the docs." in start.stdout  # the new context

        bad = hook("{not json")
        assert bad.returncode == 1 and "not JSON" in bad.stderr  # 1: Claude Code reports it and goes on
        assert hook({"hook_event_name": "UserPromptSubmit", "session_id": "a/b", "prompt": "x"}).returncode == 1
    finally:
        serve.terminate()
        serve.wait(60)
        with Memory(load_settings()) as memory:
            memory.delete_namespace(namespace)


def test_the_plugin_runs_the_hook_command_and_the_mcp_server() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "kg-memory"
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
    for event, groups in hooks.items():
        [command] = [h for g in groups for h in g["hooks"]]
        assert command["type"] == "command" and command["command"].startswith("kg hook claude-code --namespace ")
        assert command.get("async", False) == (event in ("UserPromptSubmit", "Stop"))  # never delay the user
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["kg-memory"]
    assert server["command"] == "kg" and server["args"][0] == "mcp"
