"""Re-extraction reconciles: what a session's new extraction no longer finds is withdrawn.

Every statement an extraction reads from a session (a fact, a relationship) has a statement key
derived from the session and the statement, and is written as an assert event carrying it. When a
session is indexed again by another extractor version (backend, model or prompt), each statement
the earlier version asserted and the new one no longer finds is withdrawn: a withdrawal event
(`kg.ingest.temporal`: the timeline is replayed as if the old assert had never been learned) with the
reason and both versions. A statement that another session (or a direct write) also asserts is
kept. Indexing again with the same version withdraws nothing, and a statement found again keeps
its event, so nothing changes.

A statement withdrawn and found again by a later version is asserted anew, under the next
generation of its key (`event_ids`). This module is pure; `kg.ingest.session_graph` does the I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["fact", "relationship"]


@dataclass(frozen=True)
class Asserted:
    """One assert event a session's extraction wrote, as `sessions/statements` reads it back."""

    kind: Kind
    event: Mapping[str, Any]
    withdrawn: bool
    corroborated: bool

    @property
    def statement(self) -> str:
        return self.event.get("statement") or self.event["id"]

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "Asserted":
        return cls(row["kind"], row["event"], bool(row["withdrawn"]), bool(row["corroborated"]))


def event_ids(statements: Iterable[str], prior: Sequence[Asserted]) -> dict[str, str]:
    """The event id to write each found statement under: its standing assert's (a no-op), else
    the next generation of its key (the key itself the first time)."""
    live = {p.statement: p.event["id"] for p in prior if not p.withdrawn}
    generations: dict[str, int] = {}
    for p in prior:
        generations[p.statement] = generations.get(p.statement, 0) + 1
    out = {}
    for s in statements:
        n = generations.get(s, 0)
        out[s] = live.get(s) or (s if n == 0 else f"{s}.{n}")
    return out


def stale(prior: Sequence[Asserted], found: Iterable[str]) -> list[Asserted]:
    """The standing statements of the session the new extraction did not find and nothing else evidences."""
    found = set(found)
    return [p for p in prior if not p.withdrawn and not p.corroborated and p.statement not in found]


def reason(version: str, withdrawn: Mapping[str, Any]) -> str:
    """Why `withdrawn` (an assert event) is taken back, naming both extractor versions."""
    found_by = f"{withdrawn.get('extractor') or 'an earlier extractor'}:{withdrawn.get('prompt_version')}"
    return f"re-extraction: not found by {version} (found by {found_by})"
