"""`kg reembed`: a database whose vectors were made by another embedder is refused at start-up,
and re-embedding brings every vector and the indexes back into the configured space."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kg import AsyncMemory, load_settings
from kg.core.store.store import EmbedderMismatch
from kg.ingest.reembed import EMBEDDED, reembed


async def test_reembed_switches_the_embedding_space(memory: AsyncMemory, namespace: str) -> None:
    turn = await memory.add_message(namespace, "user", "We host everything in Frankfurt.",
                                    datetime(2025, 1, 1, tzinfo=timezone.utc))
    await memory.store.write("database/embedding_space_set", model="other/old-model", dim=768)
    stale = AsyncMemory(load_settings())
    with pytest.raises(EmbedderMismatch, match="kg reembed"):
        await stale.open()

    done = await reembed(load_settings())

    late = {"turn_tokens"} if memory.late_encoder is not None else set()  # token vectors made again last
    assert set(done) == {kind.name for kind in EMBEDDED} | late
    assert done["turns"] >= 1 and all(done[kind] >= 1 for kind in late)
    space = (await memory.store.read("database/embedding_space_get"))[0]
    assert (space["model"], space["dim"]) == (memory.embedder.name, memory.embedder.dim)
    async with AsyncMemory(load_settings()) as fresh:
        hits = await fresh.search_turns(namespace, "which city hosts our servers?", k=1)
    assert hits[0].turn.id == turn.id
    indexes = {r["name"]: r["state"] for r in await memory.store.read("database/status_indexes")}
    assert all(indexes[name] == "ONLINE" for name in indexes if name.endswith("embedding"))
