"""The saved Neo4j Browser queries of `cypher/browser/`: each is one statement that runs as pasted
(its inputs are literals on its first `WITH` line, no `:param` lines), is read-only, and answers on a
seeded namespace; the style file covers the labels and has no caption Browser would cut."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from kg import AsyncMemory

BROWSER = Path(__file__).resolve().parents[1] / "cypher" / "browser"
QUERIES = sorted(BROWSER.glob("*.cypher"))
INPUTS = re.compile(r"^WITH (.+?)\s*// the inputs: edit them$", re.M)
INPUT = re.compile(r"('[^']*'|null|true|false|-?\d+(?:\.\d+)?) AS (\w+)")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def parse(path: Path) -> tuple[dict[str, str], str]:
    """(input name -> its literal, the query as pasted) of one saved-query file."""
    text = path.read_text("utf-8")
    assert not re.search(r"^\s*:", text, re.M), f"{path.name}: no client commands (:param); Browser runs one statement"
    match = INPUTS.search(text)
    assert match, f"{path.name}: the inputs are literals on a `WITH ... // the inputs: edit them` line"
    inputs = {name: literal for literal, name in INPUT.findall(match[1])}
    assert ", ".join(f"{v} AS {k}" for k, v in inputs.items()) == match[1], f"{path.name}: inputs are plain literals"
    query = text.strip()
    code = "\n".join(line for line in query.splitlines() if not line.lstrip().startswith("//"))
    assert query.endswith(";") and code.count(";") == 1, f"{path.name}: one statement, ending with ;"
    assert "$" not in query, f"{path.name}: a $parameter Browser would ask for"
    return inputs, query.rstrip(";")


def bind(query: str, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The query with its inputs line reading parameters instead of the literals."""
    line = "WITH " + ", ".join(f"${name} AS {name}" for name in values)
    return INPUTS.sub(line, query, count=1), values


async def run(memory: AsyncMemory, query: str, params: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    async with memory.store.driver.session(database=memory.store.database) as session:
        result = await session.run(query, params)
        rows = [r.data() for r in await result.fetch(1000)]
        summary = await result.consume()
    return rows, summary.query_type


async def evaluate(memory: AsyncMemory, literals: dict[str, str]) -> dict[str, Any]:
    values = {}
    for name, literal in literals.items():
        rows, _ = await run(memory, f"RETURN {literal} AS v", {})
        values[name] = rows[0]["v"]
    return values


def test_every_browser_file_is_listed() -> None:
    names = {p.stem for p in QUERIES}
    assert {"session_timeline", "entity_facts_over_time", "supersession_chains", "rule_graduation",
            "duplicate_alias_clusters", "session_summaries", "jobs", "relationships_over_time"} <= names


@pytest.mark.parametrize("path", QUERIES, ids=[p.stem for p in QUERIES])
async def test_saved_query_runs_as_pasted_and_is_read_only(memory: AsyncMemory, path: Path) -> None:
    inputs, query = parse(path)
    assert inputs, f"{path.name}: has inputs to edit"
    await run(memory, query, {})  # as pasted: no parameter set
    _, kind = await run(memory, "EXPLAIN " + query, {})
    assert kind == "r", f"{path.name} must only read"


async def seed(memory: AsyncMemory, namespace: str) -> str:
    await memory.add_turns(namespace, "s1", [
        {"role": "user", "speaker": "Maya", "text": "I live in Porto.", "ts": T0},
        {"role": "assistant", "text": "Noted.", "ts": T0 + timedelta(minutes=1)},
        {"role": "user", "speaker": "Maya", "text": "Actually I moved to Lisbon.", "ts": T0 + timedelta(minutes=2)},
    ])
    turns = await memory.turns(namespace, "s1")
    await memory.remember(namespace, "Maya", "lives_in", "Porto", valid_from=datetime(2020, 1, 1, tzinfo=timezone.utc),
                          evidence_turn_ids=[turns[0].id], subject_type="person")
    await memory.remember(namespace, "Maya", "lives_in", "Lisbon", valid_from=datetime(2024, 6, 1, tzinfo=timezone.utc),
                          evidence_turn_ids=[turns[2].id])
    await memory.remember(namespace, "maya", "works_at", "Acme", object_type="organization")
    await memory.add_correction(namespace, "s1", "Always answer in British English.", correction_type="style",
                                seen_at=T0, evidence_turn_ids=[turns[1].id])
    return turns[0].id


async def test_saved_queries_answer_on_a_seeded_namespace(memory: AsyncMemory, namespace: str) -> None:
    await seed(memory, namespace)
    answers: dict[str, list[dict[str, Any]]] = {}
    for path in QUERIES:
        literals, query = parse(path)
        params = await evaluate(memory, literals)
        params.update({k: v for k, v in {"namespace": namespace, "session_id": "s1", "name": "Maya"}.items()
                       if k in params})
        answers[path.stem], _ = await run(memory, *bind(query, params))

    timeline = answers["session_timeline"]
    assert [r["who"] for r in timeline] == ["Maya", "assistant", "Maya"]
    assert timeline[0]["evidence_for"] == ["lives_in = Porto"]
    assert timeline[1]["evidence_for"] == ["Always answer in British English."]

    facts = answers["entity_facts_over_time"]
    assert {(r["predicate"], r["value"], r["status"]) for r in facts if r["status"] != "expired"} == {
        ("lives_in", "Porto", "ended"), ("lives_in", "Lisbon", "current"), ("works_at", "Acme", "current")}

    [chain] = answers["supersession_chains"]
    assert chain["subject"] == "Maya" and chain["chain"] == ["Lisbon from 2024-06-01", "Porto from 2020-01-01"]

    [rule] = answers["rule_graduation"]
    assert rule["status"] == "correction" and rule["sessions_seen"] == 1

    overview = answers["namespace_overview"][0]
    counts = {c["label"]: c["nodes"] for c in overview["counts"]}
    assert counts["Session"] == 1 and counts["Turn"] == 3 and counts["Correction"] == 1
    assert answers["duplicate_alias_clusters"] == []  # Maya and maya are one entity


def test_style_covers_the_labels() -> None:
    style = (BROWSER / "style.grass").read_text("utf-8")
    assert style.count("{") == style.count("}")
    for label in ("Session", "Turn", "Entity", "Fact", "Correction", "Summary", "Job"):
        assert re.search(rf"^node\.{label} \{{", style, re.M), label
    for rel in ("SUBJECT", "OBJECT", "SUPERSEDES", "EVIDENCED_BY", "LINK", "SUMMARIZES", "NEXT"):
        assert re.search(rf"^relationship\.{rel} \{{", style, re.M), rel
    # Browser's grass parser splits a line at every colon: a caption holding one loses its text
    captions = re.findall(r"^\s*caption:\s*(.*)$", style, re.M)
    assert captions and all(":" not in c for c in captions), [c for c in captions if ":" in c]
