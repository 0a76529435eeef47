"""Schema: constraints, indexes, recorded migrations, and the embedding-space guard."""

from __future__ import annotations

import pytest

from kg import AsyncMemory, cypher
from kg.core.store.store import EmbedderMismatch
from tests.cypher_state import cypher_value


async def test_constraints_and_indexes_exist(memory: AsyncMemory) -> None:
    rows = await memory.store.read("database/status_indexes")
    by_name = {r["name"]: r for r in rows}
    assert by_name["turn_embedding"]["type"] == "VECTOR" and by_name["turn_embedding"]["state"] == "ONLINE"
    assert by_name["turn_key_text"]["type"] == "FULLTEXT" and "turn_text" not in by_name
    assert by_name["turn_key_text"]["properties"] == ["key_text", "namespace"]
    assert by_name["turn_namespace_ts"]["properties"] == ["namespace", "ts"]
    assert {"session_key", "turn_id"} <= set(by_name)  # uniqueness constraints are backed by indexes
    options = await cypher_value(memory, "SHOW VECTOR INDEXES YIELD name, options WHERE name = 'turn_embedding' "
                                         "RETURN options")
    assert options["indexConfig"]["vector.dimensions"] == memory.embedder.dim


async def test_migrations_are_recorded_and_idempotent(memory: AsyncMemory) -> None:
    applied = {r["id"] for r in await memory.store.read("database/migration_applied")}
    assert set(cypher.migrations()) <= applied
    assert await memory.store.migrate(memory.embedder.name, memory.embedder.dim) == []


async def test_switching_embedder_is_refused_with_reembed_hint(memory: AsyncMemory) -> None:
    with pytest.raises(EmbedderMismatch, match="kg reembed"):
        await memory.store.check_embedding_space("voyage/voyage-3.5-lite", 1024)
    with pytest.raises(EmbedderMismatch, match="dim 384"):
        await memory.store.check_embedding_space("other/model", 384)
    await memory.store.check_embedding_space(memory.embedder.name, memory.embedder.dim)


def test_every_cypher_file_loads() -> None:
    for name in cypher.migrations():
        assert cypher.statements(name)
    with pytest.raises(KeyError):
        cypher.load("turns/does_not_exist")
