"""What the connected Neo4j can do, asked once per connection (`Store.connect`).

The 5.26 LTS line and the calendar line (2025.01 and later) differ in Cypher: the calendar line
takes Cypher 25 (`CYPHER 25` before a statement) beside Cypher 5, and Cypher 25 brings what 5.26
lacks (the `SEARCH` clause of vector indexes with filters in the index, among others). The store
asks the server for its version and edition and tries one `CYPHER 25` statement; `path` names the
set of statements it runs: a statement `cypher/<name>.cypher25.cypher` beside `<name>.cypher` is
run instead of it on a server that takes Cypher 25 (kg.cypher.variant). `kg neo4j status` and
`/ready` report it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Capabilities:
    version: str  # "2026.08.1", "5.26.30"
    edition: str  # "community", "enterprise"
    cypher: tuple[str, ...]  # the Cypher versions it takes: ("5",) or ("5", "25")

    @property
    def path(self) -> str:
        """The statements the store runs: "cypher25" (with the Cypher 25 variants) or "cypher5"."""
        return "cypher25" if "25" in self.cypher else "cypher5"

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
