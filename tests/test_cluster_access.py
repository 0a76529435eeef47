"""Cluster-ready access on the real server: the URI scheme the run asked for, reads and writes by
access mode, and one bookmark chain shared by every way the store reaches the database."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import neo4j

from kg import AsyncMemory
from kg.core.store.store import Tx


def test_the_run_uses_the_uri_scheme_it_asked_for(memory: AsyncMemory) -> None:
    routing = os.environ.get("KG_TEST_URI_SCHEME", "bolt") == "neo4j"
    assert isinstance(memory.store.driver, neo4j.AsyncNeo4jDriver if routing else neo4j.AsyncBoltDriver)


async def test_a_read_after_a_write_carries_its_bookmark(memory: AsyncMemory, namespace: str) -> None:
    bookmarks = memory.store.driver.execute_query_bookmark_manager
    written = await memory.relate(namespace, "Maya", "works_for", "Acme",
                                  valid_from=datetime(2024, 1, 1, tzinfo=timezone.utc))
    before = set(await bookmarks.get_bookmarks())
    end = {"id": "ent_cluster_test", "key": "tom", "name": "Tom", "type": "person"}

    async def work(tx: Tx) -> None:  # a write in a session the store opens, not through execute_query
        await tx.run("relationships/slot_ensure", namespace=namespace, subject=end, object=end, relation="knows")

    await memory.store.transaction(work)
    after = set(await bookmarks.get_bookmarks())
    assert after and after != before  # the session's commit advanced the shared chain
    [edge] = await memory.relationships(namespace, "Maya", "works_for")
    assert edge.id == written.edge_id
    await memory.store.autocommit("namespaces/delete", namespace=namespace)
    assert set(await bookmarks.get_bookmarks()) != after
    assert await memory.relationships(namespace, "Maya") == []
