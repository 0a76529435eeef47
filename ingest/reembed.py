"""`kg reembed`: re-embed every stored vector with the configured embedder and rebuild the indexes."""

from __future__ import annotations

import asyncio
from typing import Callable

from kg.config import Settings
from kg.embeddings import embedder_for
from kg.store import Store

PAGE = 512


async def reembed(settings: Settings, on_progress: Callable[[int, int], None] | None = None) -> int:
    """Returns the number of turns re-embedded. Safe to re-run after an interruption: it starts over
    and the embedding space is only switched once every vector is in the new space."""
    embedder = await asyncio.to_thread(embedder_for, settings.embedding)
    store = await Store.connect(settings)
    try:
        await store.migrate_structure()
        total = (await store.read("queries/turns_count"))[0]["count"]
        await store.drop_vector_indexes()
        done, after = 0, ""
        limit = settings.ingest.max_embed_chars
        while True:
            rows = await store.read("queries/turns_for_reembed", after=after, limit=PAGE)
            if not rows:
                break
            vectors = await asyncio.to_thread(embedder.embed, [r["text"][:limit] for r in rows])
            await store.write(
                "queries/turns_set_embedding",
                model=embedder.name,
                rows=[{"id": r["id"], "embedding": v} for r, v in zip(rows, vectors)],
            )
            done += len(rows)
            after = rows[-1]["id"]
            if on_progress:
                on_progress(done, total)
        await store.rebuild_vector_indexes(embedder.name, embedder.dim)
        return done
    finally:
        await store.close()
