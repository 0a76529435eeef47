"""The NDJSON export format (docs/export.md): pure functions over plain data, no database.

A file is a header line, node lines, edge lines and an end line. Values are JSON, except
instants, which are tagged (`{"$datetime": "2026-01-02T03:04:05+00:00"}`) so an import writes
them back as Neo4j datetimes, not strings.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from itertools import chain
from typing import Any, Iterable, Iterator, Mapping

from pydantic import BaseModel, Field

from kg.core.models.values import native

FORMAT = "kg-memory-export"
VERSION = 1
# Operational nodes, not memory: jobs and the per-namespace write locks (made again on demand).
SKIP_LABELS = ("Job", "JobLock", "TurnLock", "CorrectionLock")
# The labels of memory, each with its identity beside the namespace: the keys of its uniqueness
# constraint (cypher/migrations), which an import seeks a node by. A file's labels are checked against
# this list, and cypher/export/*.cypher and cypher/import/nodes.cypher hold a branch for each label
# (a static label is what lets the planner seek the label's index; tests/test_export_format.py).
IDENTITY: dict[str, tuple[str, ...]] = {
    "Session": ("id",), "Turn": ("id",), "Summary": ("id",),
    "Entity": ("id",), "EntityName": ("id",), "NameKey": ("type", "key"), "Identifier": ("kind", "value"),
    "FactSlot": ("subject_key", "predicate"), "Fact": ("id",), "FactEvent": ("id",),
    "RelationSlot": ("subject_id", "relation"), "RelationEvent": ("id",),
    "Correction": ("id",), "CorrectionCluster": ("id",), "Decision": ("id",), "StoreItem": ("id",),
    "Erasure": ("id",),
}
# The relationship types between nodes of memory, the only ones an import writes.
TYPES = ("ABOUT", "EVIDENCED_BY", "FROM_SESSION", "HAS_EVENT", "HAS_FACT", "HAS_KEY", "HAS_MEMBER", "HAS_TURN",
         "IDENTIFIED_BY", "LINK", "MENTIONS", "NAME_OF", "NEXT", "OBJECT", "RELATES_TO", "REPLACES", "ROLLS_UP",
         "SUBJECT", "SUMMARIZES", "SUPERSEDES")
PAGE = 500


class ExportFormatError(ValueError):
    """A line of an import file is not this format; the message names the line and the field."""


def is_vector(key: str) -> bool:
    """A vector property: `embedding`, `*_embedding`, a long turn's `passage_embeddings` (its later
    parts' vectors end to end, made by the same model as its `embedding`), or a turn's `late_tokens`
    (its token vectors packed, never exported: an import makes them again)."""
    return key in ("embedding", "late_tokens") or key.endswith(("_embedding", "_embeddings"))


def usable_vectors(props: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The vectors of an imported node that the configured embedder made (`embedding_model`, or
    `context_model` for a context key): set as vectors, as the writers set them; the others are
    embedded again on import."""
    return {k: v for k, v in props.items() if is_vector(k) and isinstance(v, list) and v
            and props.get("context_model" if k == "context_embedding" else "embedding_model") == model}


def encode(value: Any) -> Any:
    value = native(value)
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    return value


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "$datetime" in value:
            return datetime.fromisoformat(value["$datetime"])
        if "$date" in value:
            return date.fromisoformat(value["$date"])
        raise ExportFormatError(f"unknown tagged value {sorted(value)}")
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def header(namespace: str, subject: str | None, vectors: bool, exported_at: datetime) -> dict[str, Any]:
    return {"record": "header", "format": FORMAT, "version": VERSION, "namespace": namespace, "subject": subject,
            "vectors": vectors, "exported_at": exported_at.isoformat()}


def node_record(row: Mapping[str, Any], vectors: bool) -> dict[str, Any]:
    """A node as exported; its vectors, lists of numbers, go as they are."""
    props = {k: v if is_vector(k) else encode(v) for k, v in sorted(row["props"].items())
             if not is_vector(k) or vectors and k != "late_tokens"}
    return {"record": "node", "ref": row["ref"], "labels": sorted(row["labels"]), "props": props}


def edge_record(row: Mapping[str, Any]) -> dict[str, Any]:
    props = {k: encode(v) for k, v in sorted(row["props"].items())}
    return {"record": "edge", "ref": row["ref"], "type": row["type"], "start": row["start"], "end": row["end"],
            "props": props}


def dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def check_header(record: Mapping[str, Any]) -> None:
    if record.get("format") != FORMAT:
        raise ExportFormatError(f"line 1: format is {record.get('format')!r}, expected {FORMAT!r}")
    if record.get("version") != VERSION:
        raise ExportFormatError(f"line 1: version {record.get('version')!r} is not supported (this reads {VERSION})")


def checked(records: Iterable[Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """A file's records in order with their line numbers, each checked as it comes: the header
    first, then nodes whose labels are memory's (`IDENTITY`) and that carry their identity, edges of
    memory's types (`TYPES`) whose two ends are nodes before them, and last the end record, whose
    counts must match (it is not yielded). ExportFormatError names the first bad line. Holds only the
    refs of the nodes read so far. The props come decoded (`decode`), but the vectors (lists of
    numbers, read as they are)."""
    refs: set[str] = set()
    counts = {"node": 0, "edge": 0}
    line, ended = 0, False
    for line, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise ExportFormatError(f"line {line}: not a JSON object")
        kind = record.get("record")
        if line == 1:
            check_header(record)
            if not isinstance(record.get("namespace"), str) or not record["namespace"]:
                raise ExportFormatError("line 1: header record lacks field 'namespace'")
            yield line, record
            continue
        if ended:
            raise ExportFormatError(f"line {line}: a {kind!r} record after the end record")
        try:
            if kind == "node":
                _check_node(line, record, refs)
            elif kind == "edge":
                _check_edge(line, record, refs)
            elif kind == "end":
                if (record.get("nodes"), record.get("edges")) != (counts["node"], counts["edge"]):
                    raise ExportFormatError(f"line {line}: end counts {record.get('nodes')}/{record.get('edges')}"
                                            f" but the file holds {counts['node']}/{counts['edge']}")
                ended = True
                continue
            else:
                raise ExportFormatError(f"line {line}: record is {kind!r}, expected node, edge or end")
        except KeyError as missing:
            raise ExportFormatError(f"line {line}: {kind} record lacks field {missing}") from None
        counts[kind] += 1
        yield line, {**record, "props": _decoded(line, kind, record["props"])}
    if line == 0:
        raise ExportFormatError("line 1: no header (empty file?)")
    if not ended:
        raise ExportFormatError("no end record: the export was cut short")


def decoded(records: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The node and edge records of a file that `checked` has already read through, in order, their
    props decoded as `checked` gives them; nothing is checked again (an import's second reading)."""
    for line, record in enumerate(records, start=1):
        kind = record.get("record")
        if kind in ("node", "edge"):
            yield {**record, "props": _decoded(line, kind, record["props"])}


def _check_node(line: int, record: Mapping[str, Any], refs: set[str]) -> None:
    labels, props, ref = record["labels"], record["props"], record["ref"]
    if not isinstance(labels, list) or not labels or not isinstance(props, dict) or not isinstance(ref, str):
        raise ExportFormatError(f"line {line}: node needs a ref, labels and props")
    for label in labels:
        if not isinstance(label, str) or label not in IDENTITY:
            raise ExportFormatError(f"line {line}: label {label!r} is not one of memory's ({', '.join(IDENTITY)})")
    for key in identity(labels):
        if props.get(key) is None:
            raise ExportFormatError(f"line {line}: {labels[0]} node lacks its identity property {key!r}")
    refs.add(ref)


def _check_edge(line: int, record: Mapping[str, Any], refs: set[str]) -> None:
    kind = record["type"]
    if not isinstance(kind, str) or kind not in TYPES:
        raise ExportFormatError(f"line {line}: relationship type {kind!r} is not one of memory's ({', '.join(TYPES)})")
    for end in ("start", "end"):
        if not isinstance(record[end], str) or record[end] not in refs:
            raise ExportFormatError(f"line {line}: edge {end} {record[end]!r} is no node before it")
    if not isinstance(record["props"], dict):
        raise ExportFormatError(f"line {line}: edge props are not an object")


def _decoded(line: int, kind: str, props: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in props.items():
        try:
            out[key] = value if is_vector(key) else decode(value)
        except (ExportFormatError, ValueError, TypeError) as exc:
            raise ExportFormatError(f"line {line}: {kind} property {key!r}: {exc}") from None
    return out


def mapped_id(target: str, old: str) -> str:
    """An id in the target namespace. Ids are unique across namespaces (cypher/migrations), so a copy
    into another namespace gets new ones: a tag of the target inserted after the id's prefix (`t-`,
    `fact_`), the same on every import (idempotent). Inserting one tag keeps the ids' order, which
    breaks ties in every ranked list: the copy ranks as the original does."""
    cut = min((i for i in (old.find("-"), old.find("_")) if i >= 0), default=-1)
    tag = hashlib.sha256(target.encode()).hexdigest()[:8]
    return f"{old[: cut + 1]}{tag}{old[cut + 1:]}"


def own_id(record: Mapping[str, Any]) -> str | None:
    """The id of a node or edge record that a copy into another namespace renames: every one, but
    sessions' (named by their caller, their ids are unique per namespace and stay)."""
    value = record["props"].get("id")
    return value if isinstance(value, str) and "Session" not in record.get("labels", ()) else None


def id_map(target: str, nodes: Iterable[Mapping[str, Any]], edges: Iterable[Mapping[str, Any]] = ()) -> dict[str, str]:
    """Old id to new for every node and edge that has one (`own_id`)."""
    return {old: mapped_id(target, old) for r in chain(nodes, edges) if (old := own_id(r)) is not None}


def remap(value: Any, ids: Mapping[str, str]) -> Any:
    """Every string (or list item) that is an exported id, as its id in the target namespace."""
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, list):
        return [remap(v, ids) for v in value]
    return value


def identity(labels: list[str]) -> tuple[str, ...]:
    """The properties an import matches an existing node on, beside the namespace: those of its first
    label (KeyError for a label not of memory; `checked` refuses those first)."""
    return IDENTITY[labels[0]]


class ImportReport(BaseModel):
    """What `import_records` wrote: 0 created on a second import of the same file."""

    namespace: str
    nodes: int = 0
    edges: int = 0
    nodes_created: int = 0
    edges_created: int = 0
    embedded: dict[str, int] = Field(default_factory=dict)  # vectors embedded again, per kind (kg reembed's)
