"""Export and import of a namespace as NDJSON records (docs/export.md), behind
`AsyncMemory.export_namespace` and `import_records`, which the CLI's `kg export` / `kg import ndjson`
and the HTTP export route call."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, AsyncIterator, Iterable

from kg.core.embedders.base import Embedder
from kg.core.models import export as fmt
from kg.core.models.export import ImportReport
from kg.core.models.facts import entity_key
from kg.core.models.turns import check_namespace
from kg.core.settings.tree import Settings
from kg.core.store.store import Store
from kg.ingest.reembed import embed_missing

BATCH = 500


async def export_namespace(store: Store, namespace: str, subject: str | None = None,
                           vectors: bool = False) -> AsyncIterator[dict[str, Any]]:
    """The records of `AsyncMemory.export_namespace`, page by page."""
    check_namespace(namespace)
    only: list[str] | None = None
    if subject is not None:
        rows = await store.read("export/subject_scope", namespace=namespace, key=entity_key(subject))
        if not rows:
            raise KeyError(f"no subject {subject!r} in namespace {namespace!r}")
        only = [r["ref"] for r in rows]
    yield fmt.header(namespace, subject, vectors, datetime.now(timezone.utc))
    counts = {"node": 0, "edge": 0}
    for kind, statement in (("node", "export/nodes"), ("edge", "export/edges")):
        after = ""
        while True:
            page = await store.read(statement, namespace=namespace, after=after, only=only,
                                         skip_labels=list(fmt.SKIP_LABELS), limit=fmt.PAGE)
            for row in page:
                yield fmt.node_record(row, vectors) if kind == "node" else fmt.edge_record(row)
            counts[kind] += len(page)
            if len(page) < fmt.PAGE:
                break
            after = page[-1]["ref"]
    yield {"record": "end", "nodes": counts["node"], "edges": counts["edge"]}

async def import_records(store: Store, embedder: Embedder, settings: Settings, namespace: str,
                         records: Iterable[dict[str, Any]]) -> ImportReport:
    """Exported records into `namespace` (`AsyncMemory.import_records`)."""
    check_namespace(namespace)
    nodes, edges, source = _read(records)
    ids: dict[str, str] = {}
    if source != namespace:
        ids = fmt.id_map(namespace, nodes, edges)
    report = ImportReport(namespace=namespace, nodes=len(nodes), edges=len(edges))
    refs: dict[str, str] = {}
    for start in range(0, len(nodes), BATCH):
        rows = []
        for n in nodes[start:start + BATCH]:
            props = {k: fmt.remap(fmt.decode(v), ids) for k, v in n["props"].items()}
            props["namespace"] = namespace
            vectors = fmt.usable_vectors(props, embedder.name)
            props = {k: v for k, v in props.items() if not fmt.is_vector(k)}
            rows.append({"ref": n["ref"], "labels": n["labels"], "props": props, "vectors": vectors,
                         "keys": fmt.identity(n["labels"], props)})
        for row in await store.write("import/nodes", namespace=namespace, rows=rows):
            refs[row["ref"]] = row["node"]
            report.nodes_created += int(row["created"])
    for start in range(0, len(edges), BATCH):
        rows = []
        for e in edges[start:start + BATCH]:
            props = {k: fmt.remap(fmt.decode(v), ids) for k, v in e["props"].items()}
            if "namespace" in props:
                props["namespace"] = namespace
            rows.append({"type": e["type"], "start": refs[e["start"]], "end": refs[e["end"]], "props": props,
                         "keys": ["id"] if "id" in props else sorted(props)})
        [row] = await store.write("import/edges", rows=rows)
        report.edges_created += row["created"] or 0
    # what searches read that the file did not carry (exported without vectors, or from another
    # embedder) is embedded again by the code that embeds it everywhere else (kg.ingest.reembed)
    report.embedded = await embed_missing(store, embedder, settings, namespace)
    return report


def _read(records: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """The file's nodes and edges, checked line by line, and the namespace it was exported from."""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    source = ""
    refs: set[str] = set()
    ended = False
    for line, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise fmt.ExportFormatError(f"line {line}: not a JSON object")
        if line == 1:
            fmt.check_header(record)
            source = str(record.get("namespace", ""))
            continue
        kind = record.get("record")
        try:
            if kind == "node":
                if not record["labels"] or not isinstance(record["props"], dict):
                    raise fmt.ExportFormatError(f"line {line}: node needs labels and props")
                refs.add(record["ref"])
                nodes.append(record)
            elif kind == "edge":
                for end in ("start", "end"):
                    if record[end] not in refs:
                        raise fmt.ExportFormatError(f"line {line}: edge {end} {record[end]!r} is no node before it")
                edges.append(record)
            elif kind == "end":
                if (record.get("nodes"), record.get("edges")) != (len(nodes), len(edges)):
                    raise fmt.ExportFormatError(f"line {line}: end counts {record.get('nodes')}/{record.get('edges')}"
                                                f" but the file holds {len(nodes)}/{len(edges)}")
                ended = True
            else:
                raise fmt.ExportFormatError(f"line {line}: record is {kind!r}, expected node, edge or end")
        except KeyError as missing:
            raise fmt.ExportFormatError(f"line {line}: {kind} record lacks field {missing}") from None
    if not source:
        raise fmt.ExportFormatError("line 1: no header (empty file?)")
    if not ended:
        raise fmt.ExportFormatError("no end record: the export was cut short")
    return nodes, edges, source
