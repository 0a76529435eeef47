"""Not a test module: `make typecheck` (mypy) reads this file, so the synchronous twins stay typed.
Each `type: ignore[...]` below marks a wrong call that must stay a type error: with
`warn_unused_ignores`, mypy fails the day a twin loses its signature (e.g. becomes `Any`)."""

from __future__ import annotations

from datetime import datetime, timezone

from kg import Client, FactView, Memory, RankedTurn  # the types through kg's lazy names
from kg.types import RememberResult


def with_memory(memory: Memory) -> None:
    now = datetime.now(timezone.utc)
    memory.add_message("acme", "user", "I moved to Lisbon", ts=now)
    done: RememberResult = memory.remember("acme", "user", "lives_in", "Lisbon", valid_from=now)
    held: list[FactView] = memory.facts("acme", "user", predicate="lives_in", as_of=now)
    hits: list[RankedTurn] = memory.search_turns("acme", "where does the user live?", k=5)
    records = [r["kind"] for r in memory.export_namespace("acme")]
    print(done, held, hits, records)
    memory.facts("acme", subjekt="user")  # type: ignore[call-arg]
    memory.search_turns("acme", "where?", k="5")  # type: ignore[arg-type]
    wrong: int = memory.facts("acme", "user")  # type: ignore[assignment]
    print(wrong)


def with_client(client: Client) -> None:
    now = datetime.now(timezone.utc)
    done: RememberResult = client.remember("acme", "user", "lives_in", "Lisbon", valid_from=now)
    held: list[FactView] = client.facts("acme", "user", as_of=now)
    hits: list[RankedTurn] = client.search_turns("acme", "where does the user live?", k=5)
    print(done, held, hits)
    client.relate("acme", "user", "works_for", "Acme", object_typ="org")  # type: ignore[call-arg]
    client.facts("acme", "user", include_superseded="yes")  # type: ignore[arg-type]
