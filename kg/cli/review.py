"""`kg why`, `kg changes`, `kg revert`, `kg confirm`: review what changed a statement (docs/trust.md).
Each revert or confirmation is a new event; nothing is rewritten."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape
from rich.table import Table

from kg.cli.terminal import NAMESPACE, call_memory, console, instant

if TYPE_CHECKING:  # imported where used: `kg --help` loads no database driver or facade
    from kg.core.models.trust import StatementEvent

JSON = typer.Option(False, "--json", help="Print the answer as JSON.")


def _events(events: "list[StatementEvent]", title: str) -> Table:
    table = Table("recorded", "event", "op", "object", "effect", "source", "trust", "by", "quoted", title=title)
    for e in events:
        by = e.change or e.extractor or "api"
        quoted = " | ".join(q.text for q in e.evidence)
        table.add_row(f"{e.recorded_at:%Y-%m-%d %H:%M:%S}", e.id, e.op, escape(e.object),
                      escape(e.effect + (f" ({', '.join(e.roles)})" if e.roles else "")), e.source, e.trust,
                      escape(by), escape(quoted[:120]))
    return table


def why(id: str = typer.Argument(..., help="A fact id (fact_...) or relationship id (rel_...)."),
        namespace: str = NAMESPACE, as_json: bool = JSON) -> None:
    """Why a fact or relationship is current, ended or superseded: the chain of events behind it."""
    found = call_memory("explain", namespace, id)
    if as_json:
        console.print_json(found.model_dump_json())
        return
    c = found.confidence
    console.print(f"{escape(found.subject)} {found.predicate} {escape(found.object)}: {found.status}, "
                  f"valid {found.valid_from:%Y-%m-%d} to {f'{found.valid_to:%Y-%m-%d}' if found.valid_to else 'now'}, "
                  f"trust {found.trust}; confidence {c.value:.2f} = {c.base:.2f} ({c.source}) x {c.reinforcement:.2f} "
                  f"(reinforced {c.reinforcement_count}) x {c.staleness:.2f} (staleness)"
                  + (" x 0 (ended)" if c.ended else ""), highlight=False)
    console.print(_events(found.events, "events, oldest learned first"))


def changes(namespace: str = NAMESPACE, since: Optional[str] = typer.Option(None, help="ISO 8601 (default: ever)."),
            limit: int = typer.Option(100, min=1, max=1000), as_json: bool = JSON) -> None:
    """What changed a statement since SINCE: supersessions, retractions, held untrusted statements,
    withdrawals, rewinds, reverts, confirmations, and invalidated corrections."""
    when: datetime | None = instant(since, "--since")
    found = call_memory("changes", namespace, when, limit)
    if as_json:
        console.print_json(found.model_dump_json())
        return
    console.print(_events(found.events, "statements"))
    table = Table("invalidated", "correction", "reason", "by", "similarity", title="corrections")
    for c in found.corrections:
        table.add_row(f"{c.invalidated_at:%Y-%m-%d %H:%M:%S}", f"{c.id} {escape(c.rule_text)}", c.reason,
                      escape(c.by_text or c.by or ""), f"{c.similarity:.2f}" if c.similarity is not None else "")
    console.print(table)


def revert(event_id: str = typer.Argument(..., help="A fact or relationship event id, or a correction id."),
           namespace: str = NAMESPACE) -> None:
    """Undo one automatic change by a new event (the old value holds again)."""
    done = call_memory("revert", namespace, event_id)
    console.print(f"reverted {done.target} ({done.kind}) by {done.event_id or 'a new state'}: "
                  f"{len(done.created_ids)} versions recorded, {len(done.expired_ids)} expired", highlight=False)


def confirm(id: str = typer.Argument(..., help="An untrusted fact or relationship event id, or correction id."),
            namespace: str = NAMESPACE) -> None:
    """Confirm an untrusted statement: from now on it counts as trusted."""
    done = call_memory("confirm", namespace, id)
    console.print(f"confirmed {done.target} ({done.kind}): now {done.decision}", highlight=False)
