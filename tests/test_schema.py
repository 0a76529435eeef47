"""Schema: constraints, indexes, recorded migrations, and the embedding-space guard."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg import AsyncMemory, cypher, load_settings
from kg.core.local_neo4j.server import LocalNeo4j
from kg.core.store.store import EmbedderMismatch
from tests.cypher_state import cypher_value
from tests.test_local_server import free_port


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


OPEN = """
import asyncio
from kg import AsyncMemory, load_settings
async def main():
    async with AsyncMemory(load_settings()):
        pass
asyncio.run(main())
"""


@pytest.mark.neo4j  # a spare server, new
def test_processes_opening_a_new_database_at_once_all_start(tmp_path: Path) -> None:
    """Each creates the schema; before, two of three died on a deadlock over the schema's lock, or on the
    index another had just created (an equivalent rule: what `IF NOT EXISTS` asked for)."""
    import neo4j

    bolt, http = free_port(), free_port()
    server = LocalNeo4j(load_settings().neo4j.local.model_copy(
        update={"data_dir": tmp_path, "bolt_port": bolt, "http_port": http}))
    env = {**os.environ, "KG_NEO4J__LOCAL__DATA_DIR": str(tmp_path), "KG_NEO4J__LOCAL__BOLT_PORT": str(bolt),
           "KG_NEO4J__LOCAL__HTTP_PORT": str(http)}
    env.pop("KG_NEO4J__URI", None)
    try:
        status = server.start(echo=lambda _: None)
        opening = [subprocess.Popen([sys.executable, "-c", OPEN], env=env, stderr=subprocess.PIPE, text=True)
                   for _ in range(3)]
        for p in opening:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err[-2000:]
        with neo4j.GraphDatabase.driver(status.bolt_uri, auth=("neo4j", server.password())) as driver:
            records, _, _ = driver.execute_query("MATCH (m:Migration) RETURN m.id AS id")
        assert sorted(r["id"] for r in records) == sorted(cypher.migrations())  # each recorded once
    finally:
        server.stop(echo=lambda _: None)
