"""`kg forget session|turn|subject|namespace`: erase for good, leaving a content-free record (see
docs/forgetting.md); `kg forget log` lists the records."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from kg.cli.terminal import NAMESPACE, call_memory, console, fail, run

if TYPE_CHECKING:  # imported where used: `kg --help` loads no model
    from kg.core.models.turns import Erasure

forget_app = typer.Typer(help="Erase a session, a subject or a namespace for good (retract keeps history; "
                              "this does not).", no_args_is_help=True, rich_markup_mode=None)


def _namespace(namespace: str) -> str:
    from kg.core.models.turns import check_namespace

    try:
        return check_namespace(namespace)
    except ValueError as exc:
        fail(str(exc))


def _erase(method: str, namespace: str, *target: str) -> None:
    erasure: Erasure = call_memory(method, namespace, *target)  # nothing to erase: said plainly, exit 2
    counts = ", ".join(f"{n} {label}" for label, n in erasure.counts.items()) or "nothing"
    restored = ", ".join(f"{n} {label}" for label, n in erasure.restored.items())
    console.print(f"erased {escape(counts)}" + (f"; restored {escape(restored)}" if restored else "")
                  + f"; record {erasure.id} ({erasure.target_hash[:19]}...)", highlight=False)


@forget_app.command("session")
def forget_session(session_id: str = typer.Argument(...), namespace: str = NAMESPACE) -> None:
    """A session, its turns and summaries, and what only it evidenced."""
    _erase("erase_session", namespace, session_id)


@forget_app.command("turn")
def forget_turn(turn_id: str = typer.Argument(...), namespace: str = NAMESPACE) -> None:
    """One message and what only it evidenced; its session's summaries are made again without it."""
    _erase("erase_turn", namespace, turn_id)


@forget_app.command("subject")
def forget_subject(subject: str = typer.Argument(...), namespace: str = NAMESPACE) -> None:
    """Every fact and fact event about SUBJECT, its relationships, and its entity when unreferenced."""
    _erase("erase_subject", namespace, subject)


@forget_app.command("namespace")
def forget_namespace(namespace: str = NAMESPACE, yes: bool = typer.Option(False, "--yes", help="Do not ask.")) -> None:
    """Everything in the namespace (only the erasure records stay)."""
    if not yes and not typer.confirm(f"Erase everything in {namespace!r}?"):
        raise typer.Exit(1)
    _erase("erase_namespace", namespace)


@forget_app.command("log")
def forget_log(namespace: str = NAMESPACE, limit: int = 50) -> None:
    """The namespace's erasure records, newest first."""
    from kg.memory import AsyncMemory

    ns = _namespace(namespace)

    async def go() -> list[Erasure]:
        async with AsyncMemory() as memory:
            return await memory.erasures(ns, limit)

    table = Table("id", "scope", "erased at", "by", "counts")
    for e in run(go()):
        table.add_row(e.id, e.scope, f"{e.erased_at:%Y-%m-%d %H:%M:%S}", escape(e.by),
                      escape(", ".join(f"{k} {v}" for k, v in e.counts.items())))
    console.print(table)
