"""The `kg rules`, `kg corrections` and `kg corrections maintain|confirm|clusters` commands
(registered on the app in `kg.cli`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from kg.cli.terminal import NAMESPACE, console, err, fail, run

if TYPE_CHECKING:  # imported where used: `kg --help` loads no database driver or facade
    pass

corrections_app = typer.Typer(help="Corrections the user made, and the rules they graduated to.",
                               rich_markup_mode=None)


def rules(namespace: str = NAMESPACE) -> None:
    """The rules and strong preferences of a namespace, as the markdown block an agent's prompt gets."""

    from kg.memory import AsyncMemory

    async def go() -> str:
        async with AsyncMemory() as memory:
            return (await memory.core_rules(namespace)).render()

    block = run(go())
    console.print(block or f"no rules yet in {namespace}", markup=False, highlight=False)


@corrections_app.callback(invoke_without_command=True)
def corrections(
    ctx: typer.Context,
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n"),
    status: Optional[str] = typer.Option(None, "--status", "-s", help="correction, pattern, preference or rule."),
    include_invalidated: bool = typer.Option(False, "--all", "-a", help="Also the invalidated ones."),
) -> None:
    """Browse a namespace's corrections, most reinforced first."""
    from kg.core.models.corrections import STATUSES
    from kg.memory import AsyncMemory

    if ctx.invoked_subcommand is not None:
        return
    if namespace is None:
        err.print("[red]error:[/] missing option --namespace / -n")
        raise typer.Exit(2)
    if status is not None and status not in STATUSES:
        fail(f"unknown status {repr(status)}; use one of {', '.join(STATUSES)}")

    async def go() -> list[Any]:
        async with AsyncMemory() as memory:
            return await memory.corrections(namespace, status, include_invalidated)

    table = Table("id", "status", "sessions", "weight", "last seen", "rule", "invalidated")
    for c in run(go()):
        gone = f"{c.invalidated_reason} {c.invalidated_at:%Y-%m-%d}" if c.invalidated_at else ""
        table.add_row(escape(c.id), c.status, str(c.reinforcement_count), f"{c.weight:.2f}",
                      f"{c.last_seen_at:%Y-%m-%d}",
                      escape(c.rule_text), gone)
    console.print(table)


@corrections_app.command("maintain")
def maintain(namespace: str = NAMESPACE) -> None:
    """The nightly job now: cluster, merge, promote and decay; prints the report and where it is."""

    from kg.memory import AsyncMemory

    async def go() -> Any:
        async with AsyncMemory() as memory:
            return await memory.maintain_corrections(namespace)

    report = run(go())
    console.print(report.markdown(), markup=False, highlight=False)
    console.print(f"report: {escape(str(report.json_path))} and {escape(str(report.markdown_path))}", highlight=False)


@corrections_app.command("confirm")
def confirm(correction_id: str = typer.Argument(...), namespace: str = NAMESPACE) -> None:
    """The user confirmed a correction explicitly: it becomes a rule."""

    from kg.memory import AsyncMemory

    async def go() -> Any:
        async with AsyncMemory() as memory:
            return await memory.confirm_rule(namespace, correction_id)

    try:
        view = run(go())
    except KeyError as exc:
        fail(str(exc.args[0]), 1)
    console.print(f"{view.id}: {view.status} - {escape(view.rule_text)}")


@corrections_app.command("clusters")
def clusters(namespace: str = NAMESPACE, limit: int = 10) -> None:
    """The most reinforced clusters found by the last `kg corrections maintain`."""

    from kg.memory import AsyncMemory

    async def go() -> list[Any]:
        async with AsyncMemory() as memory:
            return await memory.correction_clusters(namespace, limit)

    table = Table("label", "members", "reinforcement", "statuses", "representative")
    for k in run(go()):
        table.add_row(escape(k.label), str(k.members), str(k.reinforcement), ", ".join(k.statuses),
                      escape(k.representative))
    console.print(table)
