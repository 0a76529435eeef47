"""The vector indexes' shapes as the schema files make them (`IndexShape`), to tell an index made by
an earlier version or another server line from the one wanted, and their `DROP INDEX` statements."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import kg.cypher as cypher


def _drops() -> dict[str, str]:
    """Each vector index's `DROP INDEX` statement, by index name, from the schema files."""
    texts = cypher.statements("schema/drop_vector_indexes") + cypher.statements("schema/drop_fallback_vector_indexes")
    return {text.split()[2]: text for text in texts}


@dataclass(frozen=True)
class IndexShape:
    """What a schema file's `CREATE VECTOR INDEX` statement makes: its name, the properties it
    carries (the vector's first, then the filter properties of `WITH [...]`) and whether it is
    quantized. The text is the product's own (cypher/schema), never user input."""

    name: str
    properties: tuple[str, ...]
    quantized: bool
    graph: tuple[tuple[str, int], ...] = ()  # the HNSW settings it names (`vector.hnsw.m`, ...)

    _GRAPH: ClassVar[re.Pattern[str]] = re.compile(r"`vector\.hnsw\.(m|ef_construction)`: (\d+)")
    _FORM: ClassVar[re.Pattern[str]] = re.compile(
        r"VECTOR INDEX (\w+) IF NOT EXISTS FOR \((\w+):\w+\) ON \2\.(\w+)(?: WITH \[([^\]]*)\])?")

    @classmethod
    def of(cls, text: str) -> "IndexShape":
        found = cls._FORM.search(text)
        if found is None:
            raise ValueError(f"not a vector index statement: {text[:80]!r}")
        name, _, vector, extra = found.groups()
        filters = tuple(p.strip().split(".", 1)[1] for p in (extra or "").split(",") if p.strip())
        graph = tuple((f"vector.hnsw.{key}", int(value)) for key, value in cls._GRAPH.findall(text))
        return cls(name, (vector, *filters), "`vector.quantization.enabled`: false" not in text, graph)

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether the index described by a `database/vector_index_shapes` row is this one."""
        config = row.get("config") or {}
        unquantized = (config.get("vector.quantization.enabled") is False
                       or str(config.get("vector.quantization.type", "")).upper() == "NONE")
        return (sorted(row.get("properties") or []) == sorted(self.properties) and (self.quantized or unquantized)
                and all(config.get(key) == value for key, value in self.graph))

    def describe(self) -> str:
        graph = "".join(f", {key.removeprefix('vector.hnsw.')} {value}" for key, value in self.graph)
        return f"[{', '.join(self.properties)}]{'' if self.quantized else ', unquantized'}{graph}"


DROPS = _drops()  # by index name
