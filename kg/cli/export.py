"""`kg export` and `kg import ndjson`: a namespace (or one subject's data, for a data-access
request) to NDJSON and back, in the format of docs/export.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional, TextIO

import typer
from rich.markup import escape

from kg.cli.terminal import NAMESPACE, console, err, run

if TYPE_CHECKING:  # imported where used: `kg --help` loads no database driver, facade or model
    from kg.core.models.export import ImportReport


def export(
    namespace: str = NAMESPACE,
    subject: Optional[str] = typer.Option(None, "--subject", "-s",
                                          help="Only what is held about this subject (a data-access request)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here; default standard output."),
    vectors: bool = typer.Option(False, "--vectors", help="Include the embeddings (else an import re-embeds)."),
) -> None:
    """Export a namespace as NDJSON: sessions, turns, summaries, entities, facts and relationships
    with their history, corrections, erasure records."""
    from kg.core.models.export import dumps
    from kg.memory import AsyncMemory

    async def go(out: TextIO) -> int:
        async with AsyncMemory() as memory:
            lines = 0
            try:
                async for record in memory.export_namespace(namespace, subject, vectors):
                    out.write(dumps(record) + "\n")
                    lines += 1
            except KeyError as exc:
                raise LookupError(exc.args[0]) from None
            return lines

    if output is None:
        run(go(sys.stdout), LookupError)
        return
    with output.open("w", encoding="utf-8") as out:
        lines = run(go(out), LookupError)
    err.print(f"{lines} records -> {escape(str(output))}", highlight=False)


class _Records:
    """The records of an export file, read from its start again on each reading: the import reads
    the file twice (checks, then writes) without holding it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Iterator[dict[str, Any]]:
        from kg.core.models.export import ExportFormatError

        with self.path.open(encoding="utf-8") as lines:
            for n, line in enumerate(lines, start=1):
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ExportFormatError(f"line {n}: not JSON ({exc.msg})") from None


def import_ndjson(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="A file written by `kg export`."),
    namespace: str = NAMESPACE,
) -> None:
    """Load a `kg export` file into a namespace (here or in another database); a second import of
    the same file writes nothing."""
    from kg.core.models.export import ExportFormatError
    from kg.memory import AsyncMemory

    async def go() -> ImportReport:
        async with AsyncMemory() as memory:
            return await memory.import_records(namespace, _Records(file))

    report = run(go(), ExportFormatError)
    embedded = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in report.embedded.items() if n)
    console.print(f"namespace {report.namespace}: {report.nodes_created} nodes and {report.edges_created} edges "
                  f"written ({report.nodes} nodes, {report.edges} edges in the file)"
                  + (f"; embedded {embedded}" if embedded else ""), highlight=False)
