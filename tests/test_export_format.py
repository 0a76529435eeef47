"""The export format's fixed lists against the Cypher library, and the line checks of an import
(docs/export.md), with no database.

An import seeks each node by its label's uniqueness index, and the export pages each label by its
index on the namespace: both need the label written out in the statement, so each holds a branch
per label of `IDENTITY`. These tests keep the list, the branches, the constraints and the labels and
relationship types the product writes in step."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from kg import cypher
from kg.core.models import export as fmt

CYPHER = Path(__file__).resolve().parents[1] / "cypher"
# nodes with no namespace: never exported (schema bookkeeping, cached LLM answers on a session)
UNSCOPED = {"Migration", "EmbeddingSpace", "LLMAnswer"}
UNSCOPED_TYPES = {"HAS_ANSWER"}  # a session to its cached LLM answers


def written() -> tuple[set[str], set[str]]:
    """The labels and relationship types the product's statements create or merge."""
    labels: set[str] = set()
    types: set[str] = set()
    for path in CYPHER.rglob("*.cypher"):
        if path.parts[-2] in ("browser", "migrations", "schema"):
            continue
        for line in path.read_text("utf-8").splitlines():
            if re.search(r"\b(CREATE|MERGE)\b", line) and not line.lstrip().startswith("//"):
                labels |= set(re.findall(r"\(\w*:([A-Z]\w+)", line))
                types |= set(re.findall(r"\[\w*:([A-Z_]+)", line))
    return labels, types


def unique_keys() -> dict[str, tuple[str, ...]]:
    """Each label's uniqueness constraint, its keys beside the namespace (cypher/migrations)."""
    keys: dict[str, tuple[str, ...]] = {}
    for path in sorted((CYPHER / "migrations").glob("*.cypher")):
        for label, props in re.findall(r"FOR \(\w+:(\w+)\) REQUIRE \(?([\w., ]+?)\)? IS UNIQUE", path.read_text()):
            keys[label] = tuple(p.split(".")[1] for p in props.split(",") if p.split(".")[1] != "namespace")
    return keys


def test_identity_is_each_label_s_uniqueness_constraint() -> None:
    labels, _ = written()
    assert set(fmt.IDENTITY) == labels - UNSCOPED - set(fmt.SKIP_LABELS)
    constraints = unique_keys()
    for label, keys in fmt.IDENTITY.items():
        assert constraints[label] == keys, label


def test_types_are_those_the_product_writes() -> None:
    _, types = written()
    assert set(fmt.TYPES) == types - UNSCOPED_TYPES


@pytest.mark.parametrize("name", ["import/nodes", "export/refs"])
def test_every_label_has_its_branch(name: str) -> None:
    text = cypher.load(name)
    assert re.findall(r"label = '(\w+)'", text) == list(fmt.IDENTITY)
    assert re.findall(r"MATCH \(n:(\w+)", text) == list(fmt.IDENTITY)
    assert "$(" not in text.split("CREATE")[0]  # no label given as a value where a node is looked up


HEAD = fmt.header("src", None, False, datetime(2025, 3, 1))


def node(ref: str, label: str = "Turn", **props: Any) -> dict[str, Any]:
    return {"record": "node", "ref": ref, "labels": [label], "props": {"id": f"t-{ref}", **props}}


def edge(start: str, end: str, kind: str = "NEXT") -> dict[str, Any]:
    return {"record": "edge", "ref": f"{start}>{end}", "type": kind, "start": start, "end": end, "props": {}}


def end(nodes: int, edges: int) -> dict[str, Any]:
    return {"record": "end", "nodes": nodes, "edges": edges}


def test_a_good_file_reads_in_order_with_its_lines_and_values_decoded() -> None:
    records = [HEAD, node("a", ts={"$datetime": "2025-03-01T09:00:00+00:00"}, embedding=[0.5, 1.0]), node("b"),
               edge("a", "b"), end(2, 1)]
    read = list(fmt.checked(records))
    assert [line for line, _ in read] == [1, 2, 3, 4]
    assert read[1][1]["props"]["ts"] == datetime.fromisoformat("2025-03-01T09:00:00+00:00")
    assert read[1][1]["props"]["embedding"] == [0.5, 1.0]


@pytest.mark.parametrize(("records", "message"), [
    ([], "line 1: no header"),
    ([{"format": "other"}], "line 1: format"),
    ([HEAD, node("a"), node("b", "Bogus"), end(2, 0)],
     "line 3: label 'Bogus' is not one of memory's"),
    ([HEAD, {**node("a"), "labels": ["Turn", "Job"]}, end(1, 0)], "line 2: label 'Job' is not one of memory's"),
    ([HEAD, {**node("a", "FactSlot"), "props": {"subject_key": "dana"}}, end(1, 0)],
     "line 2: FactSlot node lacks its identity property 'predicate'"),
    ([HEAD, node("a"), node("b"), edge("a", "b", "OWNS"), end(2, 1)],
     "line 4: relationship type 'OWNS' is not one of memory's"),
    ([HEAD, node("a"), edge("a", "b"), node("b"), end(2, 1)], "line 3: edge end 'b' is no node before it"),
    ([HEAD, node("a", ts={"$when": "x"}), end(1, 0)], "line 2: node property 'ts': unknown tagged value"),
    ([HEAD, node("a"), end(2, 0)], "line 3: end counts 2/0 but the file holds 1/0"),
    ([HEAD, node("a"), end(1, 0), node("b")], "line 4: a 'node' record after the end record"),
    ([HEAD, node("a")], "cut short"),
])
def test_a_bad_line_is_named(records: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(fmt.ExportFormatError, match=re.escape(message)):
        list(fmt.checked(records))
