"""`kg neo4j install|start|stop|status`: the managed local Neo4j 5.26 server (registered in `kg.cli.app`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from kg.cli.terminal import console, fail
from kg.core.config import load_settings

if TYPE_CHECKING:  # imported where used: `kg --help` loads nothing it does not print
    from kg.core.neo4j_local import LocalNeo4j

neo4j_app = typer.Typer(help="The managed local Neo4j 5.26 server.", no_args_is_help=True, rich_markup_mode=None)


def local_server() -> LocalNeo4j:
    from kg.core.neo4j_local import LocalNeo4j

    cfg = load_settings().neo4j
    return LocalNeo4j(cfg.local, cfg.password.get_secret_value() if cfg.password else None)


@neo4j_app.command("install")
def neo4j_install() -> None:
    """Resolve Neo4j and Neo4j Browser from Maven Central into the cache folder."""
    from kg.core.neo4j_local import LocalServerError

    try:
        with console.status("Resolving Neo4j with Maven (first time only)..."):
            lib = local_server().install(echo=console.print)
    except LocalServerError as exc:
        fail(str(exc))
    console.print(f"Neo4j jars in {lib}")


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Start the local server (installing it first if needed); waits until Bolt answers."""
    from kg.core.neo4j_local import LocalServerError

    local = local_server()
    try:
        if local.pid() is not None:
            console.print(f"already running (pid {local.pid()}) at {local.bolt_uri}; Browser {local.browser_url}")
            return
        with console.status("Starting Neo4j..."):
            local.start(echo=console.print)
    except LocalServerError as exc:
        fail(str(exc))
    if local.password():
        console.print(f"user neo4j, password in {local.password_file}" if not load_settings().neo4j.password
                      else "user neo4j, password from configuration")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local server (SIGTERM, then SIGKILL after the timeout)."""
    if not local_server().stop(echo=console.print):
        console.print("not running")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Is the local server installed and running, and where are its logs."""
    st = local_server().status()
    console.print(f"Neo4j {st.version}: {'installed' if st.installed else 'not installed'}, "
                  f"{f'running (pid {st.pid})' if st.running else 'not running'}")
    console.print(f"bolt {st.bolt_uri}  browser {st.browser_url}\nhome {st.home}\nlog  {st.log_file}")
    if not st.running:
        raise typer.Exit(1)
