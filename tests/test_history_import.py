"""Importing a user's existing history (docs/import.md), one format a test, on sample files built
from the formats' public descriptions (tests/fixtures/history/): sessions keep their ids and times,
tool calls become attachments (or are left out), bad lines and conversations are reported with
file:line while the rest goes in, and importing again writes nothing new. Through `AsyncMemory`,
`Memory`, HTTP (`POST .../import/{format}`) and the CLI (`kg import ...` as a process)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kg import AsyncMemory, Memory, load_settings
from kg.http import create_app
from kg.ingest.history.exchanges import json_elements
from kg.ingest.loaders import Rejected
from tests.cypher_state import cypher_value
from tests.http_client import running, settings_with

REPO = Path(__file__).resolve().parents[1]
HISTORY = REPO / "tests" / "fixtures" / "history"
PROJECT = HISTORY / "claude-code" / "-home-maya-acme-sensors"
S1, S2 = "5b0e3c1e-7f4a-4e8e-9a55-0c1a2b3c4d5e", "c2d7a9f0-1b3e-4c5d-8e6f-7a8b9c0d1e2f"
UTC = timezone.utc


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def turns_of(memory: AsyncMemory, namespace: str, session_id: str) -> list[tuple]:
    return [(t.role, t.text, t.ts, t.external_id, [(a.kind, a.caption) for a in t.attachments])
            for t in await memory.turns(namespace, session_id)]


async def test_claude_code_project_folder(memory: AsyncMemory, namespace: str) -> None:
    report = await memory.import_claude_code(namespace, PROJECT)
    assert (report.written, report.existing, report.sessions) == (6, 0, 2)
    assert report.rejected == [f"{PROJECT / (S1 + '.jsonl')}:9: malformed JSON: Expecting property name enclosed in double quotes (column 36)",
                               f"{PROJECT / (S1 + '.jsonl')}:12: timestamp: missing"]
    assert {s.id for s in await memory.sessions(namespace)} == {S1, S2}  # Claude Code's ids; no subagent session
    turns = await turns_of(memory, namespace, S1)
    assert [(role, text, ts, ext) for role, text, ts, ext, _ in turns] == [
        ("user", "Which database do we store the sensor readings in, and what is the retention?",
         at("2025-06-02T09:14:03.120Z"), "a0000000-0000-0000-0000-000000000001"),
        ("assistant", "Let me check the configuration.\n\nThe readings go to TimescaleDB, kept for 90 days "
         "(config/db.toml).", at("2025-06-02T09:14:07.010Z"), "a0000000-0000-0000-0000-000000000003"),
        ("user", "Make it 180 days and run the migration.", at("2025-06-02T09:22:41Z"),
         "a0000000-0000-0000-0000-000000000010"),
        ("assistant", "Retention is now 180 days, but the migration failed: the database user lacks permission.",
         at("2025-06-02T09:22:44Z"), "a0000000-0000-0000-0000-000000000013"),
    ]
    assert turns[1][4] == [("tool_call", 'Read {"file_path": "/home/maya/acme-sensors/config/db.toml"} -> '
                                         '[database]\nengine = "timescaledb"\nretention_days = 90')]
    assert turns[3][4] == [
        ("tool_call", 'Edit {"file_path": "config/db.toml", "new_string": "retention_days = 180", "old_string": '
                      '"retention_days = 90"} -> The file config/db.toml has been updated.'),
        ("tool_call", 'Bash {"command": "make migrate", "description": "Run the migration"} -> error: '
                      'migration 0042 failed: permission denied')]
    session = await memory.session(namespace, S1)
    assert (session.started_at, session.ended_at) == (at("2025-06-02T09:14:03.120Z"), at("2025-06-02T09:22:44Z"))

    again = await memory.import_claude_code(namespace, PROJECT)
    assert (again.written, again.existing) == (0, 6)
    assert await cypher_value(memory, "MATCH (t:Turn {namespace: $ns}) RETURN count(t)", ns=namespace) == 6


async def test_claude_code_without_tools_and_from_bytes(memory: AsyncMemory, namespace: str) -> None:
    report = await memory.import_claude_code(namespace, PROJECT / f"{S2}.jsonl", tools=False)
    assert (report.written, report.rejected) == (2, [])
    data = (PROJECT / f"{S1}.jsonl").read_bytes()
    report = await memory.import_claude_code(namespace, data, tools=False)
    assert report.written == 4 and report.rejected[0].startswith("body:9: malformed JSON")
    assert all(not attachments for *_, attachments in await turns_of(memory, namespace, S1))


async def test_chatgpt_export(memory: AsyncMemory, namespace: str) -> None:
    file = HISTORY / "chatgpt" / "conversations.json"
    report = await memory.import_chatgpt(namespace, file)
    cut = next(n for n, line in enumerate(file.read_text().splitlines(), start=1) if '"Cut short"' in line) - 1
    assert report.rejected == [f"{file}:{cut}: mapping: missing or empty"]
    assert (report.written, report.sessions) == (6, 2)
    t0 = datetime(2024, 6, 3, 9, 0, tzinfo=UTC)
    turns = await turns_of(memory, namespace, "6650f1a2-0000-4000-8000-000000000001")
    assert [(role, text, ts, ext) for role, text, ts, ext, _ in turns] == [  # the branch it was left on
        ("user", "I'm going to Porto in May. I'm vegetarian - where should I eat?", t0 + timedelta(seconds=10), "u1"),
        ("assistant", "Try Da Terra and Essencia: both are fully vegetarian.", t0 + timedelta(seconds=20), "a1b"),
        ("user", "How far is this place from Da Terra?", t0 + timedelta(seconds=100), "u2"),
        ("assistant", "About 1.2 km, a 15-minute walk.", t0 + timedelta(seconds=105), "a2"),
    ]
    assert turns[2][4] == [("image", "an image shared in ChatGPT (800x600)")]
    assert turns[3][4] == [("tool_call", "python distance('Ribeira', 'Da Terra') -> 1.2 km")]
    standup = await turns_of(memory, namespace, "6650f1a2-0000-4000-8000-000000000002")
    assert standup[0][2] == t0 + timedelta(days=1)  # no create_time of its own: the conversation's

    again = await memory.import_chatgpt(namespace, file)
    assert (again.written, again.existing) == (0, 6)


@pytest.mark.neo4j
def test_openai_and_anthropic_message_lists_through_memory() -> None:
    namespace = f"test-{os.urandom(6).hex()}"
    start = datetime(2025, 5, 1, 8, 0, tzinfo=UTC)
    with Memory(load_settings()) as memory:
        try:
            report = memory.import_messages(namespace, HISTORY / "messages" / "openai.json", "openai")
            assert (report.written, report.rejected) == (4, [])
            turns = memory.turns(namespace, "chat-support-42")  # its own id
            assert [(t.role, t.ts) for t in turns] == [  # system left out; times follow created_at
                ("user", at("2025-05-20T14:00:01Z")), ("assistant", at("2025-05-20T14:00:02Z")),
                ("user", at("2025-05-20T14:00:05Z")), ("assistant", at("2025-05-20T14:00:06Z"))]
            assert turns[1].text == "Order 1187 shipped with CTT and should arrive on 22 May."
            assert [(a.kind, a.caption) for a in turns[1].attachments] == [
                ("tool_call", 'lookup_order {"order_id": "1187"} -> {"status": "shipped", "carrier": "CTT", '
                              '"eta": "2025-05-22"}')]

            file = HISTORY / "messages" / "openai-finetune.jsonl"
            report = memory.import_messages(namespace, file, "openai", start=start)
            assert report.written == 4 and report.rejected == [
                f"{file}:2: malformed JSON: Unterminated string starting at (column 43)",
                f"{file}:3 (message 1): role: 'narrator' is not one of user, assistant, tool, system, developer"]
            assert [t.text for t in memory.turns(namespace, "openai-finetune-4")] == [
                "Who wrote 'Romeo and Juliet'?", "William Shakespeare."]
            assert memory.turns(namespace, "openai-finetune-1")[0].ts == start + timedelta(seconds=1)

            report = memory.import_messages(namespace, HISTORY / "messages" / "anthropic.json", "anthropic",
                                            session_id="garden", start=start)
            assert (report.written, report.rejected) == (4, [])
            garden = memory.turns(namespace, "garden")
            assert [t.role for t in garden] == ["user", "assistant", "user", "assistant"]
            assert garden[1].text == ("Let me check the shade-tolerant varieties.\n\nTry Stupice, Glacier or "
                                      "Siberian: they ripen with little sun.")
            assert [a.caption for a in garden[1].attachments] == [
                'search_varieties {"light": "partial shade", "plant": "tomato"} -> Stupice, Glacier, Siberian']
            assert memory.import_messages(namespace, HISTORY / "messages" / "anthropic.json", "anthropic",
                                          session_id="garden", start=start).written == 0
            with pytest.raises(ValueError, match="format: 'gemini'"):
                memory.import_messages(namespace, HISTORY / "messages" / "anthropic.json", "gemini")  # type: ignore[arg-type]
        finally:
            memory.delete_namespace(namespace)


def test_a_json_array_cut_short_keeps_the_elements_before_it() -> None:
    items = list(json_elements(b'[\n{"a": 1},\n{"b": 2},\n{"c": ', "f.json"))
    assert items[:2] == [("f.json:2", {"a": 1}), ("f.json:3", {"b": 2})]
    assert isinstance(items[2], Rejected) and str(items[2]).startswith("f.json:4: malformed JSON")


async def test_http_import_route(memory: AsyncMemory, namespace: str) -> None:
    app = create_app(settings_with(keys={}), memory=memory)
    async with running(app) as http:
        url = f"/v1/namespaces/{namespace}/import"
        body = (HISTORY / "chatgpt" / "conversations.json").read_bytes()
        first = await http.post(f"{url}/chatgpt", content=body, headers={"content-type": "application/json"})
        assert first.status_code == 207, first.text  # one conversation rejected, the others stored
        assert first.json()["written"] == 6 and first.json()["rejected"][0].startswith("body:")
        again = await http.post(f"{url}/chatgpt", content=body)
        assert (again.json()["written"], again.json()["existing"]) == (0, 6)
        cc = await http.post(f"{url}/claude-code", content=(PROJECT / f"{S2}.jsonl").read_bytes(),
                             params={"tools": "false"})
        assert cc.status_code == 200 and cc.json()["written"] == 2
        assert (await memory.session(namespace, S2)) is not None
        msgs = (HISTORY / "messages" / "anthropic.json").read_bytes()
        refused = await http.post(f"{url}/anthropic", content=msgs)
        assert refused.status_code == 422 and refused.json()["detail"][0]["field"] == "session_id"
        ok = await http.post(f"{url}/anthropic", content=msgs,
                             params={"session_id": "garden", "start": "2025-05-01T08:00:00Z"})
        assert ok.status_code == 200 and ok.json()["written"] == 4
        assert (await http.post(f"{url}/openai", content=b"  ")).status_code == 422
        assert (await http.post(f"{url}/gemini", content=msgs)).status_code == 422


@pytest.mark.neo4j
def test_cli_import_reports_bad_lines_and_writes_nothing_again() -> None:
    namespace = f"test-{os.urandom(6).hex()}"

    def kg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kg.cli", *args], cwd=REPO, env=dict(os.environ),
                              capture_output=True, text=True, timeout=300)

    try:
        first = kg("import", "claude-code", str(PROJECT), "-n", namespace)
        assert first.returncode == 1, first.stderr  # lines were rejected; the others stored
        assert f"{S1}.jsonl:9: malformed JSON" in first.stderr and f"{S1}.jsonl:12: timestamp: missing" in first.stderr
        assert "new turns 6" in first.stdout and "sessions 2" in first.stdout
        again = kg("import", "claude-code", str(PROJECT), "-n", namespace, "--no-tools")
        assert "new turns 2, already stored 4" in again.stdout  # the two answers with tool calls differ
        done = kg("import", "chatgpt", str(HISTORY / "chatgpt" / "conversations.json"), "-n", namespace)
        assert done.returncode == 1 and "new turns 6" in done.stdout and "mapping: missing" in done.stderr
        done = kg("import", "messages", str(HISTORY / "messages" / "anthropic.json"), "-f", "anthropic",
                  "-n", namespace, "--session-id", "garden", "--start", "2025-05-01T08:00:00Z")
        assert done.returncode == 0 and "new turns 4" in done.stdout, done.stderr
        assert kg("import", "messages", str(HISTORY / "messages" / "anthropic.json"), "-f", "gemini",
                  "-n", namespace).returncode == 2
    finally:
        with Memory(load_settings()) as memory:
            memory.delete_namespace(namespace)
