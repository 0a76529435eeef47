"""`kg neo4j install|bundle|start|stop|status`: the managed local Neo4j (registered in `kg.cli.app`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markup import escape

from kg.cli.terminal import console, fail, load_settings

if TYPE_CHECKING:  # imported where used: `kg --help` loads nothing it does not print
    from kg.core.local_neo4j.server import LocalNeo4j

neo4j_app = typer.Typer(help="The managed local Neo4j server.", no_args_is_help=True, rich_markup_mode=None)


def say(text: str) -> None:
    """Print a line of the launcher's, whose "[neo4j.local]" is text, not markup."""
    console.print(escape(text), soft_wrap=True)


def local_server(repository: str | None = None) -> LocalNeo4j:
    from kg.core.local_neo4j.server import LocalNeo4j

    cfg = load_settings().neo4j
    local = cfg.local if repository is None else cfg.local.model_copy(update={"repository": repository})
    return LocalNeo4j(local, cfg.password.get_secret_value() if cfg.password else None)


@neo4j_app.command("install")
def neo4j_install(
    from_: Optional[str] = typer.Option(None, "--from", help="A folder of jars or an archive of `kg neo4j bundle` "
                                        "(no network needed); default: the repository."),
    repository: Optional[str] = typer.Option(None, "--repository", help="A Maven repository URL (a mirror or "
                                             "proxy); default [neo4j.local] repository."),
) -> None:
    """Fetch the pinned Neo4j and Neo4j Browser jars into the cache folder, each checked against its lock."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    from kg.core.local_neo4j.server import LocalServerError

    if repository is not None and not repository.startswith(("https://", "http://")):
        fail(f"--repository: expected an http(s):// URL of a Maven repository, got {repository!r}")
    local = local_server(repository)
    if local.is_installed():
        say(f"Neo4j {local.settings.version} already installed in {local.lib_dir}")
        return
    bar = Progress("{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                   console=console, transient=True)
    task = bar.add_task("jars", total=None)

    def advance(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    try:
        with bar:
            lib = local.install(echo=say, progress=advance, from_=from_)
    except LocalServerError as exc:
        fail(str(exc))
    say(f"Neo4j jars in {lib}")


@neo4j_app.command("bundle")
def neo4j_bundle(
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="The archive to write; default "
                                          "kg-neo4j-<version>.zip in the working folder."),
) -> None:
    """Write the installed jars and their lock to one archive, for `kg neo4j install --from` on a machine
    with no network (installs first when needed)."""
    from kg.core.local_neo4j.jars import JarError, bundle, lock_for
    from kg.core.local_neo4j.server import LocalServerError

    local = local_server()
    lock = lock_for(local.settings.version, local.settings.browser_version)
    if lock is None:
        fail(f"Neo4j {local.settings.version} with Browser {local.settings.browser_version} has no lock to bundle")
    out = output or Path(f"kg-neo4j-{local.settings.version}.zip")
    try:
        local.install(echo=say)
        bundle(lock, local.lib_dir, out)
    except (LocalServerError, JarError) as exc:
        fail(str(exc))
    say(f"{out}: {len(lock.jars)} jars and their lock, {out.stat().st_size / 1e6:.0f} MB; on the other "
                  f"machine: kg neo4j install --from {out}")


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Start the local server (installing it first if needed); waits until Bolt answers."""
    from kg.core.local_neo4j.server import LocalServerError

    local = local_server()
    try:
        if local.pid() is not None:
            say(f"already running (pid {local.pid()}) at {local.bolt_uri}; Browser {local.browser_url}")
            return
        with console.status("Starting Neo4j..."):
            local.start(echo=say)
    except LocalServerError as exc:
        fail(str(exc))
    if local.password():
        say(f"user neo4j, password in {local.password_file}" if not load_settings().neo4j.password
                      else "user neo4j, password from configuration")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local server (SIGTERM, then SIGKILL after the timeout)."""
    if not local_server().stop(echo=say):
        say("not running")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Is the local server installed and running: its version as the server reports it, the statements it
    gets, the Java it runs on and why that one, its folders."""
    local = local_server()
    st = local.status()
    say(f"Neo4j {st.version} ({local.line.name}): {'installed' if st.installed else 'not installed'}, "
        f"{f'running (pid {st.pid})' if st.running else 'not running'}")
    if st.running:
        server = _ask_server()
        say(f"server {server}" if isinstance(server, str) else
            f"server Neo4j {server['version']} {server['edition']}, Cypher {', '.join(server['cypher'])}: "
            f"statements {server['path']}")
    say(f"java {st.java}")
    say(f"bolt {st.bolt_uri}  browser {st.browser_url}\nhome {st.home}\nlog  {st.log_file}")
    if not st.running:
        raise typer.Exit(1)


def _ask_server() -> dict[str, Any] | str:
    """The running server's capabilities as the store probes them on connecting, or why not."""
    import asyncio

    from kg.core.store.store import Store, StoreError

    settings = load_settings()  # the managed server, whatever [neo4j] uri says
    settings = settings.model_copy(update={"neo4j": settings.neo4j.model_copy(update={"uri": None})})

    async def ask() -> dict[str, Any]:
        store = await Store.connect(settings)
        try:
            return store.capabilities.as_dict()
        finally:
            await store.close()

    try:
        return asyncio.run(ask())
    except (StoreError, OSError) as exc:
        return f"did not answer: {exc}"
