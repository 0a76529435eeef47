"""The NDJSON export format (docs/export.md): pure functions over plain data, no database.

A file is a header line, node lines, edge lines and an end line. Values are JSON, except
instants, which are tagged (`{"$datetime": "2026-01-02T03:04:05+00:00"}`) so an import writes
them back as Neo4j datetimes, not strings.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from typing import Any, Mapping

from pydantic import BaseModel, Field

from kg.core.models.values import native

FORMAT = "kg-memory-export"
VERSION = 1
# Operational nodes, not memory: jobs and the per-namespace write locks (made again on demand).
SKIP_LABELS = ("Job", "JobLock", "TurnLock", "CorrectionLock")
# Labels whose identity is not an `id` property: their uniqueness constraints' keys (cypher/migrations).
KEYS: dict[str, tuple[str, ...]] = {
    "FactSlot": ("subject_key", "predicate"),
    "RelationSlot": ("subject_id", "relation"),
    "NameKey": ("type", "key"),
    "Identifier": ("kind", "value"),
}
PAGE = 500


class ExportFormatError(ValueError):
    """A line of an import file is not this format; the message names the line and the field."""


def is_vector(key: str) -> bool:
    """A vector property: `embedding`, `*_embedding`, or a long turn's `passage_embeddings` (its later
    parts' vectors end to end, made by the same model as its `embedding`)."""
    return key == "embedding" or key.endswith(("_embedding", "_embeddings"))


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
    props = {k: encode(v) for k, v in sorted(row["props"].items()) if vectors or not is_vector(k)}
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


def mapped_id(target: str, old: str) -> str:
    """An id in the target namespace. Ids are unique across namespaces (cypher/migrations), so a copy
    into another namespace gets new ones: a tag of the target inserted after the id's prefix (`t-`,
    `fact_`), the same on every import (idempotent). Inserting one tag keeps the ids' order, which
    breaks ties in every ranked list: the copy ranks as the original does."""
    cut = min((i for i in (old.find("-"), old.find("_")) if i >= 0), default=-1)
    tag = hashlib.sha256(target.encode()).hexdigest()[:8]
    return f"{old[: cut + 1]}{tag}{old[cut + 1:]}"


def id_map(target: str, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, str]:
    """Old id to new for every node and edge that has one, but sessions: named by their caller,
    their ids are unique per namespace and stay."""
    return {r["props"]["id"]: mapped_id(target, r["props"]["id"]) for r in nodes + edges
            if isinstance(r["props"].get("id"), str) and "Session" not in r.get("labels", ())}


def remap(value: Any, ids: Mapping[str, str]) -> Any:
    """Every string (or list item) that is an exported id, as its id in the target namespace."""
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, list):
        return [remap(v, ids) for v in value]
    return value


def identity(labels: list[str], props: Mapping[str, Any]) -> list[str]:
    """The properties an import matches an existing node on (beside the namespace)."""
    first = labels[0]
    if first in KEYS:
        return list(KEYS[first])
    return ["id"] if "id" in props else sorted(props)


class ImportReport(BaseModel):
    """What `import_records` wrote: 0 created on a second import of the same file."""

    namespace: str
    nodes: int = 0
    edges: int = 0
    nodes_created: int = 0
    edges_created: int = 0
    embedded: dict[str, int] = Field(default_factory=dict)  # vectors embedded again, per kind (kg reembed's)
