"""The `kg index` command: post-session extraction and entity resolution (registered in `kg.cli`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape
from rich.table import Table

from kg.cli.terminal import console, err, load_settings, run

if TYPE_CHECKING:  # imported where used: `kg --help` loads no database driver, facade or model
    from kg.core.models.indexing import IndexReport, SessionIndexReport
    pass

_COLUMNS = ("session", "status", "entities new/merged/known", "mentions", "facts", "rels", "corrections",
            "decisions", "LLM calls", "input tokens")


def index(
    session: Optional[str] = typer.Option(None, "--session", "-s", help="Index this session (with -n)."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Namespace; with --pending: only it."),
    pending: bool = typer.Option(False, "--pending", help="Index every closed or idle session not indexed yet."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="With --pending: at most this many sessions."),
    backend: Optional[str] = typer.Option(None, "--backend", "-b",
                                          help="Override the memory.indexing backend: a service name, offline or auto."),
) -> None:
    """Extract entities, facts, relationships, corrections and decisions from sessions into the graph.

    Exit code 1 when an extraction failed: that session is marked extraction_failed and a later
    --pending run retries it."""
    from kg.core.models.indexing import IndexReport
    from kg.memory import AsyncMemory

    if pending == (session is not None):
        err.print("[red]error:[/] give either --session ID (with -n NAMESPACE) or --pending")
        raise typer.Exit(2)
    if session is not None and namespace is None:
        err.print("[red]error:[/] --session needs --namespace")
        raise typer.Exit(2)
    settings = load_settings()
    if backend is not None:
        settings = settings.model_copy(update={"memory": settings.memory.model_copy(
            update={"indexing": settings.memory.indexing.model_copy(update={"backend": backend})})})

    async def go() -> IndexReport:
        async with AsyncMemory(settings) as memory:
            if session is not None:
                assert namespace is not None
                return IndexReport(sessions=[await memory.index_session(namespace, session)])
            return await memory.index_pending(namespace, limit)

    report = run(go(), ValueError, KeyError)
    _print(report)
    if report.failed:
        raise typer.Exit(1)


def _print(report: IndexReport) -> None:
    if not report.sessions:
        console.print("nothing to index")
        return
    table = Table(*_COLUMNS)
    for s in report.sessions:
        table.add_row(*_row(s))
    console.print(table)
    t = report.totals
    console.print(f"{report.indexed} indexed, {report.failed} failed; entities {t['entities_created']} new, "
                  f"{t['entities_merged']} merged; {t['facts']} facts, {t['relationships']} relationships, "
                  f"{t['corrections']} corrections, {t['decisions']} decisions; {t['llm_calls']} LLM calls, "
                  f"{t['input_tokens']} input tokens")
    for s in report.sessions:
        if s.error:
            err.print(f"[yellow]{escape(s.namespace)}/{escape(s.session_id)}[/] failed {s.failures} time(s): "
                      f"{escape(str(s.error))}")


def _row(s: SessionIndexReport) -> tuple[str, ...]:
    status = s.status if s.status == "indexed" else f"[red]{s.status}[/]"
    return (escape(f"{s.namespace}/{s.session_id}"), status,
            f"{s.entities_created}/{s.entities_merged}/{s.entities_reused}", str(s.mentions), str(s.facts),
            str(s.relationships), str(s.corrections), str(s.decisions), str(s.llm_calls), str(s.input_tokens))
