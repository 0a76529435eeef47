"""The one converter of Neo4j driver values to Python.

The driver returns its own temporal types (`neo4j.time.DateTime`, ...); `native` turns them into the
standard library's, and instants into `timezone.utc`. Normalizing the zone matters: the driver reads
UTC back with a named zone, and Neo4j orders `...Z[UTC]` after `...Z` at the same instant, so a
value written back unnormalized would no longer compare equal to the same instant.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

from kg.core.models.turns import as_utc


def native(value: Any) -> Any:
    """A driver value as Python; datetimes aware and in `timezone.utc`; lists converted item by item."""
    if hasattr(value, "to_native"):
        value = value.to_native()
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, list):
        return [native(v) for v in value]
    return value


def native_props(props: Mapping[str, Any], drop: Iterable[str] = ()) -> dict[str, Any]:
    """A node's or a row's properties as Python (see `native`), without the keys in `drop`."""
    skip = frozenset(drop)
    return {k: native(v) for k, v in props.items() if k not in skip}
