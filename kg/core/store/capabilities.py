"""What the connected Neo4j can do, asked once per connection (`Store.connect`).

The 5.26 LTS line and the calendar line (2025.01 and later) differ in Cypher: the calendar line
takes Cypher 25 (`CYPHER 25` before a statement) beside Cypher 5, and from 2026.02 Cypher 25 brings
what 5.26 lacks: vector indexes that carry filter properties and the `SEARCH` clause that filters
inside them, so a tenant's vector query reads only its own vectors. The store asks the server for
its version and edition and tries one `CYPHER 25` statement; `path` names the set of statements it
runs: on "cypher25" (Cypher 25 with in-index filtering) a statement `cypher/<name>.cypher25.cypher`
beside `<name>.cypher` is run instead of it (kg.cypher.variant); a server without them runs the
Cypher 5 forms (over-fetching from global indexes, docs/operations.md). `kg neo4j status` and
`/ready` report it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SEARCH_FILTERS = (2026, 2)  # the first calendar release with filters inside vector indexes (GA)


def calendar(version: str) -> tuple[int, int]:
    """(year, month) of a calendar-versioned server ("2026.08.1" -> (2026, 8)); (0, 0) for 5.x and
    anything unparsed, which sorts below every calendar release."""
    parts = version.split(".")
    try:
        year, month = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)
    return (year, month) if year >= 2025 else (0, 0)


@dataclass(frozen=True)
class Capabilities:
    version: str  # "2026.08.1", "5.26.30"
    edition: str  # "community", "enterprise"
    cypher: tuple[str, ...]  # the Cypher versions it takes: ("5",) or ("5", "25")

    @property
    def path(self) -> str:
        """The statements the store runs: "cypher25" (the Cypher 25 variants, which filter inside the
        vector indexes) on a server that takes Cypher 25 and is of 2026.02 or later, else "cypher5"."""
        return "cypher25" if "25" in self.cypher and calendar(self.version) >= SEARCH_FILTERS else "cypher5"

    def as_dict(self) -> dict[str, Any]:
        return {"version": self.version, "edition": self.edition, "cypher": list(self.cypher), "path": self.path}

    @classmethod
    def of(cls, components: list[dict[str, Any]], takes_cypher25: bool) -> "Capabilities":
        """From `dbms.components()`'s rows and whether a `CYPHER 25` statement ran."""
        kernel = next((c for c in components if c.get("name") == "Neo4j Kernel"), components[0] if components else {})
        versions = kernel.get("versions") or ["unknown"]
        return cls(str(versions[0]), str(kernel.get("edition", "unknown")),
                   ("5", "25") if takes_cypher25 else ("5",))


UNKNOWN = Capabilities("unknown", "unknown", ("5",))
