"""What every `kg` command shares: the consoles, running a coroutine with clear errors, and
parsing the time options."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Coroutine, NoReturn, Optional, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from kg.core.extras import MissingExtra
from kg.core.settings.errors import UnknownSettingError

if TYPE_CHECKING:  # imported where used: `kg --help` loads no database driver or facade
    import asyncio

    from kg.core.models.turns import IngestReport
    from kg.core.settings.tree import Settings

T = TypeVar("T")

# Pipes and CI logs get wide, readable tables; a terminal keeps its own width.
console = Console(width=None if sys.stdout.isatty() else 140)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 140)


class Commands(typer.Typer):
    """The `kg` application: a missing extra or a mistyped setting is a user's fix, not a bug, so it
    ends in one line naming the fix and exit code 2 instead of a traceback."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except (MissingExtra, UnknownSettingError) as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            sys.exit(2)


def load_settings() -> Settings:
    """The settings tree (`kg.core.settings.tree.load_settings`), imported when a command reads it:
    `kg --help` loads no pydantic-settings."""
    from kg.core.settings.tree import load_settings as load

    return load()


def fail(message: str, code: int = 2) -> NoReturn:
    """The one way a command stops on an error: one red line on stderr (`message` escaped, so a
    user's text is never read as markup) and exit `code`, without a traceback."""
    err.print(f"[red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def run(coro: Coroutine[Any, Any, T], *also: type[Exception],
        loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None) -> T:
    """Run a command's coroutine (on a loop from `loop_factory`, or asyncio's); a database, server
    or embedder problem (or one of `also`, the command's own user errors) exits 2 with its message."""
    import asyncio  # here, not at the top: `kg --help` starts no event loop

    from kg.core.embedders.base import EmbeddingError
    from kg.core.local_neo4j.server import LocalServerError
    from kg.core.store.store import StoreError

    expected: tuple[type[Exception], ...] = (LocalServerError, StoreError, EmbeddingError, *also)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(coro)
    except expected as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None


def call_memory(method: str, namespace: str, *args: Any) -> Any:
    """`AsyncMemory.<method>(namespace, *args)` for a command: a bad namespace, an unknown target
    (KeyError) or a refused value (FieldError) ends in one line and exit 2."""
    from kg.core.models.limits import FieldError
    from kg.core.models.turns import check_namespace
    from kg.memory import AsyncMemory

    try:
        ns = check_namespace(namespace)
    except ValueError as exc:
        fail(str(exc))

    async def go() -> Any:
        async with AsyncMemory() as memory:
            try:
                return await getattr(memory, method)(ns, *args)
            except KeyError as exc:  # nothing there: said plainly
                raise LookupError(exc.args[0]) from None

    return run(go(), LookupError, FieldError)


def instant(text: Optional[str], option: str) -> Optional[datetime]:
    """An ISO 8601 option value as an aware datetime (UTC when no zone is given)."""
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        err.print(f"[red]error:[/] {option} expects an ISO 8601 date or time, got {escape(repr(text))}")
        raise typer.Exit(2) from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def namespace_option(value: Optional[str]) -> Optional[str]:
    """A `--namespace` callback: the rule every door applies (`kg.core.models.check_namespace`)."""
    from kg.core.models.turns import check_namespace

    if value is None:
        return None
    try:
        return check_namespace(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).split(": ", 1)[1]) from None


NAMESPACE = typer.Option(..., "--namespace", "-n", callback=namespace_option, help="The namespace.")


def report_ingest(report: "IngestReport") -> None:
    """What an ingest or an import did: each rejected line on stderr, then the counts; exit 1 when
    a line was rejected (the others are stored)."""
    for rejection in report.rejected:
        err.print(f"[yellow]rejected[/] {escape(str(rejection))}", soft_wrap=True)  # one line each, however long
    console.print(f"received {report.received}, new turns {report.written}, already stored {report.existing}, "
                  f"sessions {report.sessions}, rejected {len(report.rejected)}")
    if report.rejected:
        raise typer.Exit(1)
