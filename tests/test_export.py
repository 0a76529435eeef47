"""Export and import (docs/export.md): a namespace round-trips into another through the Python API
and gives the same answers; a second import writes nothing; the HTTP route and the CLI commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from kg import AsyncMemory
from kg.core.models import export as fmt
from kg.http import create_app
from tests.cypher_state import cypher_rows
from tests.http_client import running, settings_with

REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2025, 3, 1, 9, tzinfo=timezone.utc)
QUESTIONS = ["where does Dana live?", "who does Dana work for?", "Lisbon", "Porto", "package manager",
             "tests before committing", "tea or coffee", "Bob's sister", "moving house", "what changed in May?"]
LINES = ["Dana moved to Lisbon and works at Acme.", "Please use uv instead of pip.", "Bob likes tea, not coffee.",
         "Dana moved again, to Porto, in May.", "Bob's sister Eve works at Acme too.",
         "Always run the tests before committing.", "Dana left Acme and joined Globex.", "Eve prefers coffee."]


async def counts(memory: AsyncMemory, namespace: str) -> Counter[str]:
    """Nodes per label and edges per type, but jobs and locks (not exported)."""
    rows = await cypher_rows(
        memory, "MATCH (n) WHERE n.namespace = $ns AND none(l IN labels(n) WHERE l IN $skip) "
                "UNWIND labels(n) AS label RETURN label, count(*) AS n "
                "UNION ALL MATCH (a)-[r]->(b) WHERE a.namespace = $ns AND b.namespace = $ns "
                "AND none(l IN labels(a) + labels(b) WHERE l IN $skip) "
                "RETURN type(r) AS label, count(*) AS n", ns=namespace, skip=list(fmt.SKIP_LABELS))
    return Counter({r["label"]: r["n"] for r in rows if r["n"]})


async def scenario(memory: AsyncMemory, namespace: str) -> None:
    """Two sessions (one summarized), facts superseded and retracted, relationships one ended,
    corrections (one confirmed into a rule)."""
    for n, line in enumerate(LINES):
        await memory.add_turns(namespace, f"s{n % 2 + 1}", [{"role": "user", "text": line, "ts": T0 + timedelta(days=n)}])
    s1 = [t.id for t in await memory.turns(namespace, "s1")]
    def day(n): return T0 + timedelta(days=n)
    await memory.remember(namespace, "Dana", "lives_in", "Lisbon", valid_from=day(0), recorded_at=day(0),
                          evidence_turn_ids=[s1[0]])
    await memory.remember(namespace, "Dana", "lives_in", "Porto", valid_from=day(60), recorded_at=day(3))
    await memory.remember(namespace, "Dana", "works_at", "Acme", valid_from=day(0), recorded_at=day(0),
                          object_type="organization")
    await memory.remember(namespace, "Dana", "works_at", "Globex", valid_from=day(6), recorded_at=day(6),
                          object_type="organization")
    await memory.remember(namespace, "Bob", "likes", "tea", valid_from=day(2), recorded_at=day(2))
    await memory.remember(namespace, "Bob", "likes", "tea", recorded_at=day(7), op="retract")
    await memory.relate(namespace, "Bob", "sibling_of", "Eve", valid_from=day(4), recorded_at=day(4),
                        subject_type="person", object_type="person")
    await memory.relate(namespace, "Eve", "works_at", "Acme", valid_from=day(4), recorded_at=day(4),
                        subject_type="person", object_type="organization")
    await memory.relate(namespace, "Eve", "works_at", "Acme", valid_from=day(7), recorded_at=day(7), op="retract",
                        subject_type="person", object_type="organization")
    rule = await memory.add_correction(namespace, "s2", "Always run the tests before committing", seen_at=day(5))
    await memory.add_correction(namespace, "s1", "Use uv instead of pip", seen_at=day(1))
    await memory.confirm_rule(namespace, rule.correction_id, at=day(5))
    assert await memory.close_session(namespace, "s1", now=day(30)) is not None


async def answers(memory: AsyncMemory, namespace: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for as_of, known_at in ((T0 + timedelta(days=1), T0 + timedelta(days=1)),
                            (T0 + timedelta(days=70), T0 + timedelta(days=4)), (None, None)):
        for subject in ("Dana", "Bob"):
            facts = await memory.facts(namespace, subject, as_of=as_of, known_at=known_at, include_superseded=True)
            out[f"facts {subject} {as_of} {known_at}"] = [f.model_dump(mode="json") for f in facts]
    for subject in ("Bob", "Eve"):
        rels = await memory.relationships(namespace, subject, include_ended=True)
        out[f"relationships {subject}"] = [r.model_dump(mode="json") for r in rels]
    out["core_rules"] = (await memory.core_rules(namespace, at=T0 + timedelta(days=8))).model_dump(mode="json")
    for q in QUESTIONS:
        hits = await memory.search_turns(namespace, q, 10)
        out[f"search {q}"] = [(h.model_dump(mode="json")) for h in hits]
    return out


def translated(value: Any, ids: dict[str, str]) -> Any:
    """The source namespace's answers as the copy should give them: its ids mapped, its name replaced."""
    if isinstance(value, dict):  # reading a fact stamps its last access: the time of each reading, not data
        return {k: translated(v, ids) for k, v in value.items() if k != "last_accessed_at"}
    if isinstance(value, (list, tuple)):
        return [translated(v, ids) for v in value]
    return fmt.remap(value, ids)


async def collect(records: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r async for r in records]


@pytest.fixture
async def target(memory: AsyncMemory) -> AsyncIterator[str]:
    ns = f"test-{uuid.uuid4().hex[:12]}"
    yield ns
    await memory.delete_namespace(ns)


async def test_round_trip_gives_the_same_answers(memory: AsyncMemory, namespace: str, target: str) -> None:
    await scenario(memory, namespace)
    records = await collect(memory.export_namespace(namespace, vectors=True))
    assert records[0]["format"] == fmt.FORMAT and records[0]["version"] == fmt.VERSION
    assert records[-1] == {"record": "end", "nodes": sum(r["record"] == "node" for r in records),
                           "edges": sum(r["record"] == "edge" for r in records)}
    source = await counts(memory, namespace)
    assert {"Session", "Turn", "Summary", "Fact", "FactEvent", "Entity", "Correction", "RELATES_TO"} <= set(source)

    report = await memory.import_records(target, records)
    assert report.nodes_created == report.nodes == sum(source[k] for k in source if k[0].isupper() and not k.isupper())
    assert await counts(memory, target) == source

    ids = fmt.id_map(target, [r for r in records if r["record"] == "node"], [r for r in records if r["record"] == "edge"])
    want = translated(await answers(memory, namespace), {**ids, namespace: target})
    got = translated(await answers(memory, target), {})
    for key in want:
        assert got[key] == want[key], key
    assert any(got[f"search {q}"] for q in QUESTIONS) and got["core_rules"]["rules"]

    again = await memory.import_records(target, records)
    assert (again.nodes_created, again.edges_created) == (0, 0)
    assert await counts(memory, target) == source


async def test_pages_of_any_size_give_the_same_records(memory: AsyncMemory, namespace: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A label's nodes are read by their ids a page at a time: pages of 2 give the records one page
    gives, whole and for one subject, each label's nodes in element-id order."""
    await scenario(memory, namespace)
    whole = [await collect(memory.export_namespace(namespace, subject=s)) for s in (None, "dana")]
    monkeypatch.setattr(fmt, "PAGE", 2)
    paged = [await collect(memory.export_namespace(namespace, subject=s)) for s in (None, "dana")]
    for one, many in zip(whole, paged):
        assert many[1:] == one[1:] and len(one) > 2 * 2  # all but the header, which holds the time
    nodes = [r for r in paged[0] if r["record"] == "node"]
    for label in fmt.IDENTITY:
        refs = [r["ref"] for r in nodes if label in r["labels"]]
        assert refs == sorted(refs), label


async def test_subject_export_holds_the_subject_alone(memory: AsyncMemory, namespace: str) -> None:
    await scenario(memory, namespace)
    records = await collect(memory.export_namespace(namespace, subject="dana"))
    held = Counter(label for r in records if r["record"] == "node" for label in r["labels"])
    assert held["Fact"] == 6 and held["FactEvent"] == 4 and not held["Correction"] and not held["Summary"]
    texts = {r["props"].get("text") for r in records if "Turn" in r.get("labels", ())}
    assert texts == {LINES[0]}  # the evidence of Dana lives_in Lisbon, no other turn
    names = {r["props"].get("key") for r in records if "Entity" in r.get("labels", ())}
    assert "dana" in names and not names & {"bob", "eve"}
    assert not any("embedding" in r.get("props", {}) for r in records)
    with pytest.raises(KeyError):
        await collect(memory.export_namespace(namespace, subject="nobody"))


async def test_a_bad_file_fails_naming_the_line(memory: AsyncMemory, target: str) -> None:
    head = fmt.header("x", None, False, T0)
    with pytest.raises(fmt.ExportFormatError, match="line 1: format"):
        await memory.import_records(target, [{"format": "other"}])
    with pytest.raises(fmt.ExportFormatError, match="line 2: node record lacks field 'labels'"):
        await memory.import_records(target, [head, {"record": "node", "ref": "a", "props": {}}])
    with pytest.raises(fmt.ExportFormatError, match="cut short"):
        await memory.import_records(target, [head])
    assert not await counts(memory, target)


async def test_import_beside_namespaces_holding_the_same_names(memory: AsyncMemory, namespace: str, target: str) -> None:
    """Sessions, fact slots and name keys are named per namespace: a copy made beside another copy
    (same session ids, same slots) finds and makes its own nodes, never its neighbour's; a copy into
    the exported namespace itself (a restore) finds every node by its id and writes nothing."""
    await scenario(memory, namespace)
    records = await collect(memory.export_namespace(namespace, vectors=True))
    source = await counts(memory, namespace)
    await memory.import_records(target, records)
    third = f"{target}-b"
    try:
        report = await memory.import_records(third, iter(records))  # a one-shot iterator: read twice all the same
        assert report.nodes_created == report.nodes and report.edges_created == report.edges
        assert await counts(memory, third) == await counts(memory, target) == await counts(memory, namespace) == source
        crossing = await cypher_rows(memory, "MATCH (a)-[r]->(b) WHERE (a.namespace = $ns) <> (b.namespace = $ns) "
                                              "RETURN count(r) AS n", ns=third)
        assert crossing == [{"n": 0}]
        sessions = await cypher_rows(memory, "MATCH (s:Session {id: 's1'}) WHERE s.namespace IN $all "
                                             "RETURN s.namespace AS ns", all=[namespace, target, third])
        assert sorted(r["ns"] for r in sessions) == sorted([namespace, target, third])
        again = await memory.import_records(third, records)
        assert (again.nodes_created, again.edges_created) == (0, 0)
        restored = await memory.import_records(namespace, records)
        assert (restored.nodes_created, restored.edges_created) == (0, 0)
        assert await counts(memory, namespace) == source
    finally:
        await memory.delete_namespace(third)


async def test_a_label_or_type_not_of_memory_writes_nothing(memory: AsyncMemory, namespace: str, target: str) -> None:
    await memory.add_turns(namespace, "s1", [{"role": "user", "text": line, "ts": T0} for line in LINES[:3]])
    records = await collect(memory.export_namespace(namespace))
    nodes = [r for r in records if r["record"] == "node"]
    edges = [r for r in records if r["record"] == "edge"]
    stranger = {"record": "node", "ref": "x", "labels": ["Stranger"], "props": {"id": "x-1"}}
    bad = [records[0], *nodes, stranger, *edges, {"record": "end", "nodes": len(nodes) + 1, "edges": len(edges)}]
    with pytest.raises(fmt.ExportFormatError, match=f"line {len(nodes) + 2}: label 'Stranger' is not one of memory's"):
        await memory.import_records(target, iter(bad))
    link = {**edges[0], "type": "KNOWS"}
    bad = [records[0], *nodes, *edges, link, {"record": "end", "nodes": len(nodes), "edges": len(edges) + 1}]
    with pytest.raises(fmt.ExportFormatError, match=f"line {len(bad) - 1}: relationship type 'KNOWS'"):
        await memory.import_records(target, bad)
    assert not await counts(memory, target)


async def test_http_export_streams_the_namespace(memory: AsyncMemory, namespace: str) -> None:
    await scenario(memory, namespace)
    async with running(create_app(settings_with(), memory=memory)) as http:
        r = await http.get(f"/v1/namespaces/{namespace}/export")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in r.text.splitlines()]
        assert lines[0]["namespace"] == namespace and lines[-1]["record"] == "end"
        assert lines[1:] == (await collect(memory.export_namespace(namespace)))[1:]
        r = await http.get(f"/v1/namespaces/{namespace}/export", params={"subject": "Dana", "vectors": "true"})
        assert r.status_code == 200 and '"embedding"' in r.text and '"key":"eve"' not in r.text
        assert '"key":"dana"' in r.text
        assert (await http.get(f"/v1/namespaces/{namespace}/export", params={"subject": "nobody"})).status_code == 404
        assert (await http.get("/v1/namespaces/Bad Name!/export")).status_code == 422


@pytest.mark.neo4j
async def test_cli_export_then_import(memory: AsyncMemory, namespace: str, target: str, tmp_path: Path) -> None:
    await scenario(memory, namespace)
    file = tmp_path / "dump.ndjson"

    def kg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kg.cli", *args], cwd=REPO, env=dict(os.environ),
                              capture_output=True, text=True, timeout=300)

    done = kg("export", "-n", namespace, "-o", str(file))
    assert done.returncode == 0, done.stderr
    stdout = kg("export", "-n", namespace, "--subject", "Dana")
    assert stdout.returncode == 0 and json.loads(stdout.stdout.splitlines()[0])["subject"] == "Dana"
    done = kg("import", "ndjson", str(file), "-n", target)
    assert done.returncode == 0, done.stderr
    assert await counts(memory, target) == await counts(memory, namespace)
    again = kg("import", "ndjson", str(file), "-n", target)
    assert again.returncode == 0 and "0 nodes" in again.stdout, again.stdout
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"format": "other"}\n')
    done = kg("import", "ndjson", str(bad), "-n", target)
    assert done.returncode != 0 and "line 1" in done.stderr + done.stdout
