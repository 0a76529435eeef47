"""The `kg` command line: the local server, schema, ingestion, search, status."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kg.cli.corrections import corrections_app, rules
from kg.cli.export import export, import_ndjson
from kg.cli.forget import forget_app
from kg.cli.history import hook_app, import_chatgpt, import_claude_code, import_messages
from kg.cli.index import index
from kg.cli.jobs import jobs_app, reindex, serve
from kg.cli.neo4j import local_server as _local
from kg.cli.neo4j import neo4j_app, neo4j_start
from kg.cli.review import changes, confirm, revert, why
from kg.cli.search import print_hits, search
from kg.cli.terminal import NAMESPACE, Commands, console, err, fail, instant, load_settings, report_ingest, run

if TYPE_CHECKING:  # imported where used: `kg --help` loads no database driver, facade or model
    from kg.core.models.turns import IngestReport, Message
    from kg.ingest.loaders import Rejected

app = Commands(help="Long-term conversational memory for AI agents, on Neo4j.", no_args_is_help=True,
                   rich_markup_mode=None)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(jobs_app, name="jobs")
app.command()(serve)
app.command()(reindex)
app.add_typer(corrections_app, name="corrections")
app.command()(rules)
app.command()(index)
app.command()(search)
app.add_typer(forget_app, name="forget")
for review in (why, changes, revert, confirm):
    app.command()(review)
app.command()(export)

DEMO_FILE = Path(__file__).resolve().parents[2] / "examples" / "demo_conversations.jsonl"


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what happens.")) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


# -- schema and status ---------------------------------------------------------------------------
@app.command()
def migrate() -> None:
    """Apply pending schema migrations and check the embedding space."""

    from kg.memory import AsyncMemory

    async def go() -> None:
        async with AsyncMemory() as memory:
            rows = await memory.store.read("database/migration_applied")
        console.print(f"{len(rows)} migrations applied: " + ", ".join(sorted(r["id"] for r in rows)))

    run(go())


@app.command()
def status() -> None:
    """Server, node counts per label and index states."""
    from kg.core.store.store import Store

    settings = load_settings()

    async def go() -> None:
        if settings.neo4j.uri is None and _local().pid() is None:
            err.print("the local Neo4j is not running: `kg neo4j start`")
            raise typer.Exit(1)
        store = await Store.connect(settings)
        try:
            counts = await store.read("database/status_counts")
            indexes = await store.read("database/status_indexes")
            space = await store.read("database/embedding_space_get")
            tokens = await store.read("database/late_counts")
        finally:
            await store.close()
        console.print(f"database {settings.neo4j.database} at {settings.neo4j.uri or _local().bolt_uri}")
        if space:
            console.print(f"embedding space: {space[0]['model']} (dim {space[0]['dim']})")
        console.print(f"late interaction: {_late_state(settings, tokens[0] if tokens else None)}")
        table = Table("label", "nodes")
        for row in counts:
            table.add_row(row["label"], str(row["count"]))
        console.print(table)
        idx = Table("index", "type", "on", "state")
        for row in indexes:
            on = f"{','.join(row['labelsOrTypes'] or [])}({','.join(row['properties'] or [])})"
            idx.add_row(row["name"], row["type"], on, f"{row['state']} {row['populationPercent']:.0f}%")
        console.print(idx)

    run(go())


# -- ingestion -----------------------------------------------------------------------------------
@app.command()
def ingest(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSONL messages or a LoCoMo JSON file."),
    fmt: str = typer.Option("jsonl", "--format", "-f", help="jsonl or locomo."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n",
                                            help="jsonl: default namespace; locomo: namespace prefix."),
    untrusted: bool = typer.Option(False, "--untrusted", help="Store every message as untrusted (tool output, "
                                   "web pages, another agent's messages: docs/trust.md)."),
) -> None:
    """Ingest messages. Bad lines are reported with file:line and skipped; exit code 1 if any."""
    from kg.core.models.turns import Message
    from kg.ingest.loaders import read_jsonl, read_locomo

    settings = load_settings()
    if fmt == "jsonl":
        source: Iterator[Message | Rejected] = read_jsonl(file, namespace, settings.ingest.max_text_chars)
    elif fmt == "locomo":
        source = read_locomo(file, namespace or "locomo")
    else:
        fail(f"unknown format {repr(fmt)}; use jsonl or locomo")
    if untrusted:
        source = (m if not isinstance(m, Message) else m.model_copy(update={"trust": "untrusted"}) for m in source)
    report_ingest(run(_ingest(source)))


async def _ingest(source: Iterator[Message | Rejected]) -> IngestReport:
    from kg.ingest.loaders import messages_only
    from kg.memory import AsyncMemory

    rejected: list[str] = []

    with Progress(TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TextColumn("turns"),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        task = progress.add_task("ingest", total=None)
        async with AsyncMemory() as memory:
            report = await memory.ingest(messages_only(source, rejected),
                                         on_batch=lambda r: progress.advance(task, r.received))
    report.rejected.extend(rejected)
    return report


@app.command()
def reembed(fallback: bool = typer.Option(False, "--fallback", help="Only the turn vectors the fallback embedder made "
                                           "while the primary was down, with the primary (no index rebuilt).")) -> None:
    """Re-embed every stored vector (turns, context keys, summaries, corrections, entity names)
    with the configured embedder and rebuild the vector indexes."""
    from kg.ingest.reembed import reembed as run_reembed
    from kg.ingest.reembed import reembed_fallback

    if fallback:
        console.print(f"re-embedded {run(reembed_fallback(load_settings()))} turns of the fallback embedder")
        return

    with Progress(TextColumn("re-embed"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        task = progress.add_task("reembed", total=None)
        done = run(run_reembed(load_settings(), lambda n, total: progress.update(task, completed=n, total=total)))
    console.print("re-embedded " + ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in done.items()))


def _late_state(settings: Any, counts: dict[str, int] | None) -> str:
    """`[embedding] late` as it stands: on or off, why, and how many turns have token vectors."""
    from kg.core.embedders import late

    held = f"{counts['with_tokens']} of {counts['turns']} turns have token vectors" if counts else ""
    if settings.embedding.late == "off":
        return f"off ([embedding] late = \"off\"); {held}"
    if not late.available():
        return f"off: pip install 'kg-memory[late]' ([embedding] late = \"{settings.embedding.late}\"); {held}"
    return f"on ({late.NAME}); {held}" + ("; the embeddings schedule fills in the rest"
                                         if counts and counts["with_tokens"] < counts["turns"] else "")


# -- reading -------------------------------------------------------------------------------------
@app.command()
def sessions(namespace: str = NAMESPACE, limit: int = 20) -> None:
    """The latest sessions of a namespace."""

    from kg.memory import AsyncMemory

    async def go() -> None:
        async with AsyncMemory() as memory:
            rows = await memory.sessions(namespace, limit)
        table = Table("session", "started", "ended", "messages", "status")
        for s in rows:
            table.add_row(escape(s.id), f"{s.started_at:%Y-%m-%d %H:%M}", f"{s.ended_at:%Y-%m-%d %H:%M}",
                          str(s.message_count), s.status)
        console.print(table)

    run(go())


# -- facts -------------------------------------------------------------------------------------
@app.command()
def facts(
    subject: str = typer.Argument(...),
    namespace: str = NAMESPACE,
    predicate: Optional[str] = typer.Option(None, "--predicate", "-p"),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Valid time (ISO 8601); default now."),
    known_at: Optional[str] = typer.Option(None, "--known-at", help="Belief at this transaction time."),
    history: bool = typer.Option(False, "--history", help="Every interval, with what superseded it."),
) -> None:
    """A subject's facts at a point in time, or their whole history."""
    from kg.memory import AsyncMemory

    valid_at, believed_at = instant(as_of, "--as-of"), instant(known_at, "--known-at")

    async def go() -> None:
        async with AsyncMemory() as memory:
            if history:
                rows = await memory.history(namespace, subject, predicate, known_at=believed_at)
            else:
                rows = await memory.facts(namespace, subject, predicate, as_of=valid_at, known_at=believed_at)
        title = f"{subject}: " + ("history" if history else f"as of {as_of or 'now'}") + (
            f", known at {known_at}" if known_at else "")
        table = Table(title=title)
        for col in ("predicate", "object", "valid from", "valid to", "recorded", "source", "status",
                    "confidence", "superseded by"):
            table.add_column(col, overflow="fold")
        values = {f.id: f.object_value for f in rows}
        for f in rows:
            table.add_row(escape(f.predicate), escape(f.object_value), f"{f.valid_from:%Y-%m-%d %H:%M}",
                          f"{f.valid_to:%Y-%m-%d %H:%M}" if f.valid_to else "", f"{f.recorded_at:%Y-%m-%d %H:%M}",
                          f.source, f.status, f"{f.confidence:.2f}",
                          escape(values.get(f.superseded_by, f.superseded_by) if f.superseded_by else ""))
        console.print(table)

    run(go())


# -- agents and other graphs -------------------------------------------------------------------
import_app = typer.Typer(help="Bring memory over from other systems.", no_args_is_help=True,
                          rich_markup_mode=None)
app.add_typer(import_app, name="import")
import_app.command("ndjson")(import_ndjson)
import_app.command("claude-code")(import_claude_code)
import_app.command("chatgpt")(import_chatgpt)
import_app.command("messages")(import_messages)
app.add_typer(hook_app, name="hook")


@app.command()
def mcp(
    namespace: Optional[list[str]] = typer.Option(None, "--namespace", "-n",
                                                  help="Namespaces the tools may use (repeatable); default all."),
) -> None:
    """Serve the memory tools to an MCP client over stdio (streamable HTTP: /mcp of the HTTP API)."""
    from kg.mcp.server import run_stdio

    try:
        run_stdio(load_settings(), namespace or ())
    except Exception as exc:
        # imported only now: the driver loads after `initialize` is answered (kg.mcp.server)
        from kg.core.embedders.base import EmbeddingError
        from kg.core.local_neo4j.server import LocalServerError
        from kg.core.store.store import StoreError

        if not isinstance(exc, (LocalServerError, StoreError, EmbeddingError)):
            raise
        fail(str(exc))


@import_app.command("graphiti")
def import_graphiti(
    group_id: str = typer.Option(..., "--group-id", "-g", help="The Graphiti group to import."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Target namespace; default the group id."),
    uri: Optional[str] = typer.Option(None, "--uri", help="Graphiti's Neo4j; default the memory's own database."),
    user: str = typer.Option("neo4j", "--user"),
    password: Optional[str] = typer.Option(None, "--password", envvar="GRAPHITI_NEO4J_PASSWORD",
                                           help="Default: $GRAPHITI_NEO4J_PASSWORD (with --uri)."),
    database: str = typer.Option("neo4j", "--database"),
    source: str = typer.Option("stated", "--source", help="Fact source: stated, observed, inferred or system."),
) -> None:
    """Read a Graphiti graph (episodes, entities, RELATES_TO edges) into a namespace."""

    from kg.core.models.turns import NAMESPACE_RULE, valid_namespace
    from kg.core.store.store import resolve_connection
    from kg.integrations.graphiti import GraphitiSource
    from kg.integrations.graphiti import import_graphiti as run_import
    from kg.memory import AsyncMemory

    if source not in ("stated", "observed", "inferred", "system"):
        fail(f"unknown --source {repr(source)}; use stated, observed, inferred or system")
    target = namespace or group_id
    if not valid_namespace(target):
        err.print(f"[red]error:[/] {escape(repr(target))} is not a valid namespace ({NAMESPACE_RULE}); "
                  "pass --namespace")
        raise typer.Exit(2)
    settings = load_settings()

    async def go() -> Any:
        if uri is None:
            conn = resolve_connection(settings)
            origin = GraphitiSource(conn.uri, conn.user, conn.password, conn.database)
        else:
            origin = GraphitiSource(uri, user, password, database)
        async with AsyncMemory(settings) as memory:
            return await run_import(memory, origin, group_id, target, source,  # type: ignore[arg-type]
                                    echo=console.print)

    report = run(go())
    for reason in report.skipped:
        err.print(f"[yellow]skipped[/] {escape(str(reason))}")
    console.print(f"namespace {report.namespace}: {report.episodes} episodes -> {report.turns_written} new turns "
                  f"({report.turns_existing} already stored), {report.entities} entities, {report.edges} edges -> "
                  f"{report.facts_asserted} asserted, {report.facts_retracted} retracted")


# -- demo ----------------------------------------------------------------------------------------
DEMO_QUERIES = [  # (namespace, question, recipe): None is the configured default
    ("demo-acme", "which database did we pick for the analytics service?", None),
    ("demo-acme", "where does the user live now?", None),
    ("demo-acme", "Postgres", "bm25"),
    ("demo-travel", "what food does she avoid?", None),
]


@app.command()
def demo() -> None:
    """Start the local Neo4j, ingest the shipped sample conversations, run a few searches."""
    from kg.ingest.loaders import read_jsonl
    from kg.memory import AsyncMemory

    local = _local()
    if load_settings().neo4j.uri is None:
        neo4j_start()
    report = run(_ingest(read_jsonl(DEMO_FILE)))
    console.print(f"demo data: {report.written} new turns, {report.existing} already stored, "
                  f"{report.sessions} sessions")

    async def go() -> None:
        settings = load_settings()
        if settings.memory.indexing.backend == "auto":  # the demo extracts offline unless told otherwise
            settings = settings.model_copy(update={"memory": settings.memory.model_copy(
                update={"indexing": settings.memory.indexing.model_copy(update={"backend": "offline"})})})
        async with AsyncMemory(settings) as memory:
            for namespace, query, recipe in DEMO_QUERIES:
                hits = await memory.search_turns(namespace, query, 3, recipe)
                print_hits(f"[{namespace}] {query}", hits[0].recipe if hits else str(recipe), hits)
            indexed = await memory.index_pending("demo-acme")
            t = indexed.totals
            console.print(f"\nindexed {indexed.indexed} demo-acme session(s) with {settings.memory.indexing.backend}: "
                          f"{t['entities_created']} new entities, {t['facts']} facts, {t['decisions']} decisions "
                          "(`kg index --pending` indexes the rest)")

    run(go())
    if load_settings().neo4j.uri is None:
        console.print(f"\nExplore the graph in Neo4j Browser: {local.browser_url} "
                      f"(connect to {local.bolt_uri}, user neo4j, password in {local.password_file})")
        console.print("Try: MATCH p=(:Session {namespace:'demo-acme'})-[:HAS_TURN]->(:Turn) RETURN p LIMIT 50")
        console.print("and: MATCH p=(:Turn {namespace:'demo-acme'})-[:MENTIONS]->(:Entity) RETURN p LIMIT 50")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
