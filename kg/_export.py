"""Export and import of a namespace as NDJSON records (docs/export.md), behind
`AsyncMemory.export_namespace` and `import_records`, which the CLI's `kg export` / `kg import ndjson`
and the HTTP export route call."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from tempfile import TemporaryFile
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, AsyncIterator, Iterable, Iterator

from kg.core.embedders.base import Embedder
from kg.core.models import export as fmt
from kg.core.models.export import ImportReport
from kg.core.models.facts import entity_key
from kg.core.models.turns import check_namespace
from kg.core.settings.tree import Settings
from kg.core.store.store import Store
from kg.ingest.reembed import embed_missing

if TYPE_CHECKING:
    from kg.core.embedders.late import LateEncoder

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
    # a label at a time: its element ids in one read (a seek of the label's index on the namespace),
    # then its nodes and their relationships a page of ids at a time, each page read by its ids
    for label in fmt.IDENTITY:
        async for row in _pages(store, "export/nodes", await _refs(store, namespace, label, only)):
            yield fmt.node_record(row, vectors)
            counts["node"] += 1
    for label in fmt.IDENTITY:  # the ids read again, not held: a namespace's may be millions
        async for row in _pages(store, "export/edges", await _refs(store, namespace, label, only),
                                namespace=namespace, only=only, labels=list(fmt.IDENTITY)):
            for edge in row["edges"]:
                yield fmt.edge_record({**edge, "start": row["start"]})
                counts["edge"] += 1
    yield {"record": "end", "nodes": counts["node"], "edges": counts["edge"]}


async def _refs(store: Store, namespace: str, label: str, only: list[str] | None) -> list[str]:
    """The element ids of the namespace's nodes of `label` (within `only` when set), in order."""
    return list((await store.read_row("export/refs", namespace=namespace, label=label, only=only))["refs"])


async def _pages(store: Store, statement: str, refs: list[str], **params: Any) -> AsyncIterator[dict[str, Any]]:
    """The rows of `statement`, a page of `refs` at a time (each page read by its ids)."""
    for start in range(0, len(refs), fmt.PAGE):
        for row in (await store.read_row(statement, refs=refs[start : start + fmt.PAGE], **params))["page"]:
            yield row


async def import_records(store: Store, embedder: Embedder, settings: Settings, namespace: str,
                         records: Iterable[dict[str, Any]], late: LateEncoder | None = None) -> ImportReport:
    """Exported records into `namespace` (`AsyncMemory.import_records`). Two readings of the records:
    the first checks every line and gathers the ids (a bad file writes nothing), the second writes
    batch by batch; neither holds the file. Turns' token vectors are never in a file: `late` makes them."""
    check_namespace(namespace)
    with _Twice(records) as twice:
        report, ids = _survey(namespace, twice)
        refs: dict[str, tuple[str, bool]] = {}  # ref -> (element id of the node found or made, made now)
        nodes: list[dict[str, Any]] = []
        edges: dict[bool, list[dict[str, Any]]] = {False: [], True: []}  # True: of a node made now
        for record in fmt.decoded(twice):  # checked by the survey: decoded only
            if record["record"] == "node":
                await _edges(store, edges, report)
                nodes.append(_node_row(record, namespace, ids, embedder.name))
                if len(nodes) == BATCH:
                    await _nodes(store, namespace, nodes, refs, report)
            elif record["record"] == "edge":
                await _nodes(store, namespace, nodes, refs, report)
                (start, made), (end, made_too) = refs[record["start"]], refs[record["end"]]
                batch = edges[made or made_too]
                batch.append(_edge_row(record, namespace, ids, start, end))
                if len(batch) == BATCH:
                    await _edges(store, edges, report)
        await _nodes(store, namespace, nodes, refs, report)
        await _edges(store, edges, report)
    # what searches read that the file did not carry (exported without vectors, or from another
    # embedder) is embedded again by the code that embeds it everywhere else (kg.ingest.reembed)
    report.embedded = await embed_missing(store, embedder, settings, namespace, late)
    return report


def _survey(namespace: str, records: Iterable[Any]) -> tuple[ImportReport, dict[str, str]]:
    """The first reading: every line checked; the counts, and the new ids of a copy into another
    namespace than the exported one (every id must be known before the first write: a session names
    its last turn, a fact its evidence)."""
    report = ImportReport(namespace=namespace)
    ids: dict[str, str] = {}
    renamed = False
    for _, record in fmt.checked(records):
        kind = record["record"]
        if kind == "header":
            renamed = record["namespace"] != namespace
            continue
        if kind == "node":
            report.nodes += 1
        else:
            report.edges += 1
        if renamed and (old := fmt.own_id(record)) is not None:
            ids[old] = fmt.mapped_id(namespace, old)
    return report, ids


def _node_row(record: dict[str, Any], namespace: str, ids: dict[str, str], model: str) -> dict[str, Any]:
    props = {k: v if fmt.is_vector(k) or not ids else fmt.remap(v, ids) for k, v in record["props"].items()}
    props["namespace"] = namespace
    return {"ref": record["ref"], "label": record["labels"][0], "labels": record["labels"],
            "props": {k: v for k, v in props.items() if not fmt.is_vector(k)},
            "vectors": fmt.usable_vectors(props, model)}


def _edge_row(record: dict[str, Any], namespace: str, ids: dict[str, str], start: str, end: str) -> dict[str, Any]:
    props = {k: fmt.remap(v, ids) for k, v in record["props"].items()}
    if "namespace" in props:
        props["namespace"] = namespace
    return {"type": record["type"], "start": start, "end": end, "props": props,
            "keys": ["id"] if "id" in props else sorted(props)}


async def _nodes(store: Store, namespace: str, rows: list[dict[str, Any]], refs: dict[str, tuple[str, bool]],
                 report: ImportReport) -> None:
    """Write a batch of node rows (each found by its label's identity, or made), then empty it."""
    if rows:
        for row in await store.write("import/nodes", namespace=namespace, rows=rows):
            refs[row["ref"]] = (row["node"], row["created"])
            report.nodes_created += int(row["created"])
        rows.clear()


async def _edges(store: Store, rows: dict[bool, list[dict[str, Any]]], report: ImportReport) -> None:
    """Write the batches of edge rows, then empty them: an edge of a node this import made cannot be
    there yet and is made without looking; the others are looked for first (a re-import)."""
    for of_new, statement in ((True, "import/edges_of_new_nodes"), (False, "import/edges")):
        if rows[of_new]:
            [row] = await store.write(statement, rows=rows[of_new])
            report.edges_created += row["created"] or 0
            rows[of_new].clear()


class _Twice:
    """Records to read twice. A list, or an iterable that starts again on each reading (the CLI's
    file), is read as it is; a one-shot iterator (a generator) is copied to a temporary file as it is
    read the first time, and read back from there the second time."""

    def __init__(self, records: Iterable[Any]) -> None:
        self._records = records
        self._spool: IO[str] | None = None
        self._read = False

    def __enter__(self) -> "_Twice":
        if iter(self._records) is self._records:
            self._spool = TemporaryFile("w+", encoding="utf-8")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._spool is not None:
            self._spool.close()

    def __iter__(self) -> Iterator[Any]:
        if self._spool is None:
            yield from self._records
        elif not self._read:
            self._read = True
            for record in self._records:
                yield record
                self._spool.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            self._spool.seek(0)
            yield from (json.loads(line) for line in self._spool)
