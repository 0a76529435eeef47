"""Context keys: each turn is also searchable as itself with its neighbours, speakers named.

A question is often answered by a turn that only makes sense after the one before it ("Who was
it?" / "My sister"); the context key lets both words meet. Keys are computed when a session is
summarized (its neighbours are known by then); until then the turn's own key finds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ingest.extraction.models import ChunkTurn
from kg.embeddings import Embedder
from kg.store import Store

NEIGHBOUR_CHARS = 300


def _line(turn: ChunkTurn, clip: bool) -> str:
    text = " ".join(turn.text.split())
    if clip and len(text) > NEIGHBOUR_CHARS:
        text = text[: NEIGHBOUR_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f"{turn.speaker or turn.role}: {text}"


def context_texts(turns: Sequence[ChunkTurn], width: int) -> list[str]:
    """For each turn of one session (in order): its window of `width` turns either side."""
    out = []
    for i, turn in enumerate(turns):
        lo, hi = max(0, i - width), min(len(turns), i + width + 1)
        out.append("\n".join(_line(turns[j], clip=j != i) for j in range(lo, hi)))
    return out


async def reembed_keys(store: Store, embedder: Embedder, max_chars: int, page: int = 512,
                       on_progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """For `kg reembed`: re-embed every context key and every summary with `embedder` (call it
    before the vector indexes are rebuilt). Returns how many of each were done."""
    done: dict[str, int] = {}
    for kind, read, write in (("context_keys", "queries/turns_context_for_reembed", "queries/turns_set_context_embedding"),
                              ("summaries", "queries/summaries_for_reembed", "queries/summaries_set_embedding")):
        count, after = 0, ""
        while rows := await store.read(read, after=after, limit=page):
            vectors = await asyncio.to_thread(embedder.embed, [r["text"][:max_chars] for r in rows])
            await store.write(write, model=embedder.name,
                              rows=[{"id": r["id"], "embedding": v} for r, v in zip(rows, vectors)])
            count += len(rows)
            after = rows[-1]["id"]
            if on_progress:
                on_progress(kind, count)
        done[kind] = count
    return done
