"""`kg reembed`: re-embed every stored vector with the configured embedder and rebuild the indexes.

Every embedded property keeps the text it was embedded from, so re-embedding needs no
extraction or summarization: each kind below pages through its nodes by id and writes new
vectors. A new kind of vector adds a line to `EMBEDDED` and its two Cypher files.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable

from kg.config import Settings
from kg.embeddings import embedder_for
from kg.store import Store

PAGE = 512


@dataclass(frozen=True)
class EmbeddedKind:
    name: str  # the key in queries/embedded_counts
    page: str  # returns id, text in id order after $after
    store: str  # writes $rows of {id, embedding} with $model


EMBEDDED = (
    EmbeddedKind("turns", "queries/turns_for_reembed", "queries/turns_set_embedding"),
    EmbeddedKind("turn_contexts", "queries/turn_contexts_for_reembed", "queries/turn_contexts_set_embedding"),
    EmbeddedKind("summaries", "queries/summaries_for_reembed", "queries/summaries_set_embedding"),
    EmbeddedKind("corrections", "queries/corrections_for_reembed", "queries/corrections_set_embedding"),
    EmbeddedKind("entity_names", "queries/entity_names_for_reembed", "queries/entity_names_set_embedding"),
)


async def reembed(settings: Settings, on_progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Re-embeds everything; returns the count per kind. Safe to re-run after an interruption: it
    starts over, and the embedding space is only switched once every vector is in the new space."""
    embedder = await asyncio.to_thread(embedder_for, settings.embedding)
    store = await Store.connect(settings)
    try:
        await store.migrate_structure()
        counts = (await store.read("queries/embedded_counts"))[0]
        total = sum(counts[kind.name] for kind in EMBEDDED)
        await store.drop_vector_indexes()
        limit, done, per_kind = settings.ingest.max_embed_chars, 0, {}
        for kind in EMBEDDED:
            after, per_kind[kind.name] = "", 0
            while page := await store.read(kind.page, after=after, limit=PAGE):
                after = page[-1]["id"]
                rows = [r for r in page if r["text"]]
                if rows:
                    vectors = await asyncio.to_thread(embedder.embed, [r["text"][:limit] for r in rows])
                    await store.write(kind.store, model=embedder.name,
                                      rows=[{"id": r["id"], "embedding": v} for r, v in zip(rows, vectors)])
                per_kind[kind.name] += len(rows)
                done += len(page)
                if on_progress:
                    on_progress(done, total)
                if len(page) < PAGE:
                    break
        await store.rebuild_vector_indexes(embedder.name, embedder.dim)
        return per_kind
    finally:
        await store.close()
