"""The saved Neo4j Browser queries of `cypher/browser/`: each parses (EXPLAIN with its `:param`
values, evaluated by the server as Browser does), is read-only, and runs on a seeded namespace;
the style file covers the labels."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from kg import AsyncMemory

BROWSER = Path(__file__).resolve().parents[1] / "cypher" / "browser"
QUERIES = sorted(BROWSER.glob("*.cypher"))
PARAM = re.compile(r"^:param\s+(\w+)\s*=>\s*(.+?);?\s*$")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def parse(path: Path) -> tuple[dict[str, str], str]:
    """(`:param` name -> Cypher expression, the query) of one saved-query file."""
    params: dict[str, str] = {}
    lines = []
    for line in path.read_text("utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("//") or not stripped:
            continue
        match = PARAM.match(stripped)
        if match:
            params[match[1]] = match[2]
        else:
            assert not stripped.startswith(":"), f"{path.name}: only :param client commands are expected"
            lines.append(line)
    query = "\n".join(lines).strip()
    assert query.endswith(";") and query.count(";") == 1, f"{path.name}: one statement, ending with ;"
    return params, query.rstrip(";")


async def run(memory: AsyncMemory, query: str, params: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    async with memory.store.driver.session(database=memory.store.database) as session:
        result = await session.run(query, params)
        rows = [r.data() for r in await result.fetch(1000)]
        summary = await result.consume()
    return rows, summary.query_type


async def evaluate(memory: AsyncMemory, expressions: dict[str, str]) -> dict[str, Any]:
    values = {}
    for name, expr in expressions.items():
        rows, _ = await run(memory, f"RETURN {expr} AS v", {})
        values[name] = rows[0]["v"]
    return values


def test_every_browser_file_is_listed() -> None:
    names = {p.stem for p in QUERIES}
    assert {"session_timeline", "entity_facts_over_time", "supersession_chains", "rule_graduation",
            "duplicate_alias_clusters", "session_summaries", "jobs", "relationships_over_time"} <= names


@pytest.mark.parametrize("path", QUERIES, ids=[p.stem for p in QUERIES])
async def test_saved_query_parses_with_its_params_and_is_read_only(memory: AsyncMemory, path: Path) -> None:
    expressions, query = parse(path)
    assert expressions, f"{path.name}: inputs are set with :param lines"
    params = await evaluate(memory, expressions)
    assert set(re.findall(r"\$(\w+)", query)) <= set(params), f"{path.name}: a $parameter without :param"
    _, kind = await run(memory, "EXPLAIN " + query, params)
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
        expressions, query = parse(path)
        params = await evaluate(memory, expressions)
        params.update({k: v for k, v in {"namespace": namespace, "session_id": "s1", "name": "Maya"}.items()
                       if k in params})
        answers[path.stem], _ = await run(memory, query, params)

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
