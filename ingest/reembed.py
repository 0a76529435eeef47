"""`kg reembed`: re-embed every stored vector with the configured embedder and rebuild the indexes.

Every embedded property keeps the text it was embedded from (a turn: what its key is made of),
so re-embedding needs no extraction or summarization: each kind below pages through its nodes by
id and writes new vectors, and turns their rebuilt key (`Turn.key_text`, kg.ingest.turn_keys).
A new kind of vector adds a line to `EMBEDDED` and its two Cypher files.

Turns' token vectors (late interaction, `[embedding] late`) are made again last, by `encode_late`,
which also fills them in for turns written without them (`embed_missing`, the backfill job).

`kg reembed --fallback` (`reembed_fallback`) replaces only the turn vectors the fallback embedder made
while the primary was down (kg.core.embedders.fallback), with no index rebuilt; the `embed_backfill`
job does the same per namespace on the `embeddings` schedule.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from kg.core.embedders.base import Embedder, embed_async
from kg.core.embedders.configured import embedder_for, late_for
from kg.core.settings.tree import Settings
from kg.core.store.store import Store

from .summaries.keys import context_vectors, quoted_vector
from .turn_keys import embed_keys, row_key

if TYPE_CHECKING:
    from kg.core.embedders.late import LateEncoder

PAGE = 512


def _text(row: dict[str, Any]) -> str:
    return row["text"]


@dataclass(frozen=True)
class EmbeddedKind:
    name: str  # the key in database/embedded_counts
    page: str  # returns id, text (and what `key` needs) in id order after $after ($namespace, $missing)
    store: str  # writes $rows of {id, embedding, text: the key embedded} with $model
    prop: str  # the vector property it writes
    key: Callable[[dict[str, Any]], str] = _text  # the text to embed, from a row of `page`


EMBEDDED = (
    # a turn's key is rebuilt from its speaker, text and attachments, so keys written under an older
    # rule (or none: text alone) are replaced along with their vectors
    EmbeddedKind("turns", "turns/for_reembed", "turns/set_embedding", "embedding", row_key),
    EmbeddedKind("turn_contexts", "turns/contexts_for_reembed", "turns/contexts_set_embedding",
                 "context_embedding"),
    EmbeddedKind("summaries", "summaries/for_reembed", "summaries/set_embedding", "embedding"),
    EmbeddedKind("corrections", "corrections/for_reembed", "corrections/set_embedding", "embedding"),
    EmbeddedKind("entity_names", "entities/names_for_reembed", "entities/names_set_embedding",
                 "embedding"),
)


async def _embed_kind(store: Store, embedder: Embedder, kind: EmbeddedKind, settings: Settings, namespace: str | None,
                      missing: bool, on_page: Callable[[int], None] | None = None) -> int:
    """Embed one kind's texts, a page at a time: every node, or (`namespace`, `missing`) one
    namespace's nodes that lack the vector. Turn keys are embedded in parts (`embed_keys`); context
    keys are made of their turns' vectors, embedded before them (`context_vectors`). How many."""
    done, limit = 0, settings.ingest.max_embed_chars
    params = {"namespace": namespace, "missing": kind.prop if missing else None,
              "width": settings.memory.summaries.context_turns}
    async for page in _pages(store, kind.page, on_page, **params):
        keys = [(r["id"], kind.key(r)) for r in page if r["text"]]
        if keys and kind.name == "turn_contexts":
            rows = [{"id": r["id"], "embedding": _context_vector(r, settings)} for r in page if r["embedding"]]
            await store.write(kind.store, model=embedder.name, rows=rows)
        elif keys and kind.name == "turns":
            await store.write(kind.store, model=embedder.name, rows=await _turn_rows(embedder, keys, settings))
        elif keys and kind.name == "summaries":
            await store.write(kind.store, model=embedder.name, rows=await _summary_rows(embedder, page, limit))
        elif keys:
            vectors = await embed_async(embedder, [key[:limit] for _, key in keys])
            await store.write(kind.store, model=embedder.name, rows=[
                {"id": i, "embedding": v, "text": key} for (i, key), v in zip(keys, vectors)])
        done += len(keys)
    return done


async def encode_late(store: Store, late: LateEncoder, settings: Settings, namespace: str | None = None,
                      missing: bool = False, on_page: Callable[[int], None] | None = None) -> int:
    """Token vectors (late interaction) of turns' keys: every turn, or (`namespace`, `missing`) one
    namespace's turns that have none. Each page commits on its own. How many."""
    done = 0
    async for page in _pages(store, "turns/for_reembed", on_page, namespace=namespace,
                             missing="late_tokens" if missing else None):
        keys = [(r["id"], row_key(r)) for r in page if r["text"]]
        if keys:
            tokens = await asyncio.wrap_future(late.submit_keys([k for _, k in keys], settings.ingest.max_passages))
            await store.write("turns/set_late_tokens", rows=[{"id": i, "tokens": t} for (i, _), t in zip(keys, tokens)])
        done += len(keys)
    return done


async def _pages(store: Store, statement: str, on_page: Callable[[int], None] | None,
                 **params: Any) -> AsyncIterator[list[dict[str, Any]]]:
    """`statement`'s rows a page at a time, in id order after the last page's; `on_page` is told each
    page's size once the caller has done with it."""
    after = ""
    while page := await store.read(statement, after=after, limit=PAGE, **params):
        after = page[-1]["id"]
        yield page
        if on_page:
            on_page(len(page))
        if len(page) < PAGE:
            break


async def embed_missing(store: Store, embedder: Embedder, settings: Settings, namespace: str,
                        late: LateEncoder | None = None) -> dict[str, int]:
    """Embed what one namespace holds without its vector (an import of a file exported without
    vectors), by the same kinds and statements as `reembed`, and the turns' token vectors with `late`:
    searches then read what they read in the namespace the file came from. Returns the count per kind."""
    counts = {kind.name: await _embed_kind(store, embedder, kind, settings, namespace, True) for kind in EMBEDDED}
    if late is not None:
        counts["turn_tokens"] = await encode_late(store, late, settings, namespace, missing=True)
    return counts


async def reembed(settings: Settings, on_progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Re-embeds everything; returns the count per kind. Safe to re-run after an interruption: it
    starts over, and the embedding space is only switched once every vector is in the new space."""
    embedder = await asyncio.to_thread(embedder_for, settings.embedding)
    store = await Store.connect(settings)
    try:
        await store.migrate_structure()
        counts = (await store.read("database/embedded_counts"))[0]
        late = await asyncio.to_thread(late_for, settings.embedding)
        total = sum(counts[kind.name] for kind in EMBEDDED) + (counts["turns"] if late is not None else 0)
        await store.drop_vector_indexes()
        per_kind: dict[str, int] = {}
        seen = [0]

        def progress(n: int) -> None:
            seen[0] += n
            if on_progress:
                on_progress(seen[0], total)

        for kind in EMBEDDED:
            per_kind[kind.name] = await _embed_kind(store, embedder, kind, settings, None, False, progress)
        await store.rebuild_vector_indexes(embedder.name, embedder.dim)
        if late is not None:  # token vectors are not indexed: searches read them as soon as they are written
            per_kind["turn_tokens"] = await encode_late(store, late, settings, on_page=progress)
        return per_kind
    finally:
        await store.close()


async def reembed_fallback(settings: Settings) -> int:
    """Replaces the fallback embedder's turn vectors by the primary's; returns how many. Fails (and
    changes nothing further) while the primary is still down; re-run it once it answers."""
    embedder = await asyncio.to_thread(embedder_for, settings.embedding)
    store = await Store.connect(settings)
    try:
        await store.migrate_structure()
        await store.check_embedding_space(embedder.name, embedder.dim)
        model = (await store.read("database/fallback_space_get"))[0]["model"]
        after, done = "", 0
        while model is not None and (page := await store.read("turns/fallback_for_reembed", model=model,
                                                                after=after, limit=PAGE)):
            after = page[-1]["id"]
            keys = [(r["id"], row_key(r)) for r in page]
            await store.write("turns/set_embedding", model=embedder.name,
                              rows=await _turn_rows(embedder, keys, settings))
            done += len(page)
        return done
    finally:
        await store.close()


async def _summary_rows(embedder: Embedder, page: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """`summaries/set_embedding` rows: an extractive summary's vector made again of the turns it quotes
    (`quoted_vector`, as when it was written), any other summary's text embedded."""
    made = {r["id"]: v for r in page if r["text"] and (v := quoted_vector(r["quoted"], embedder.dim)) is not None}
    texts = [(r["id"], r["text"]) for r in page if r["text"] and r["id"] not in made]
    embedded = await embed_async(embedder, [text[:limit] for _, text in texts]) if texts else []
    made.update((i, v) for (i, _), v in zip(texts, embedded))
    return [{"id": r["id"], "embedding": made[r["id"]], "text": r["text"]} for r in page if r["id"] in made]


async def _turn_rows(embedder: Embedder, keys: list[tuple[str, str]], settings: Settings) -> list[dict[str, Any]]:
    """`turns/set_embedding` rows: each turn's key embedded in parts (`kg.ingest.turn_keys.embed_keys`)."""
    keyed = await embed_keys(embedder, [key for _, key in keys], settings.ingest,
                             lambda texts: embed_async(embedder, texts))
    return [{"id": i, "embedding": kv.vector, "passages": kv.passages, "text": key}
            for (i, key), kv in zip(keys, keyed)]


def _context_vector(row: dict[str, Any], settings: Settings) -> list[float] | None:
    """A context key's vector from its turn's vector and its neighbours' (`context_vectors`, whose
    sum does not depend on which side a neighbour is on)."""
    cfg = settings.memory.summaries
    return context_vectors([row["embedding"], *row["around"]], len(row["around"]), cfg.context_weight)[0]
