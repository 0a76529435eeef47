"""What an embedder is (`Embedder`) and how async code awaits one (`embed_async`). The providers:
`local`, all-MiniLM-L6-v2 in int8 ONNX from a PyPI package, no torch (`kg.core.embedders.onnx`, the
default); `sentence-transformers`, any such model on torch (`kg.core.embedders.torch`, the `torch`
extra); and `voyage` (`kg.core.embedders.voyage`, the `voyage` extra).
`kg.core.embedders.configured.embedder_for` makes the configured one.

Every vector the store writes carries the provider's `name`, so a model change is detectable.
Providers are synchronous and CPU/IO bound; async code awaits `embed_async`, which runs them on
threads of their own, never on the event loop's shared pool.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, Sequence

from kg.core.telemetry.hooks import embedding


class TextEmbedder(Protocol):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        ...


class Embedder(TextEmbedder, Protocol):
    name: str  # recorded on every vector, e.g. "local/all-MiniLM-L6-v2-int8"

    @property
    def dim(self) -> int: ...


class EmbeddingError(RuntimeError):
    pass


class Threads:
    """An embedder's own threads: `batches` (ingest; `workers` of them, each started by `initializer`)
    and one for `queries`, so a query never queues behind a batch. Made on first use in each process:
    a forked child inherits the executors but not their threads, and gets its own."""

    def __init__(self, prefix: str, workers: int = 1, initializer: Callable[..., Any] | None = None,
                 initargs: tuple[Any, ...] = ()) -> None:
        self._prefix, self._workers, self._initializer, self._initargs = prefix, workers, initializer, initargs
        self._pid = -1
        self._batches: ThreadPoolExecutor | None = None
        self._queries: ThreadPoolExecutor | None = None

    def _ready(self) -> None:
        if self._pid != os.getpid():
            self._batches = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix=f"{self._prefix}-batch",
                                               initializer=self._initializer, initargs=self._initargs)
            self._queries = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self._prefix}-query")
            self._pid = os.getpid()

    @property
    def batches(self) -> ThreadPoolExecutor:
        self._ready()
        assert self._batches is not None
        return self._batches

    @property
    def queries(self) -> ThreadPoolExecutor:
        self._ready()
        assert self._queries is not None
        return self._queries


def passages(embedder: TextEmbedder, texts: Sequence[str], max_chars: int, limit: int) -> list[list[str]]:
    """Each text as the parts the embedder reads whole, in order, at most `limit` of them: its own
    token windows when it counts tokens (a `passages` method: the local models), else windows of
    `max_chars` characters. The first part is what embedding the whole text reads; a text that fits
    is one part, itself. Long turns are searched by their best part (docs/retrieval.md)."""
    split = getattr(embedder, "passages", None)
    if split is not None:
        return [parts[:limit] for parts in split(list(texts))]
    return [char_windows(text, max_chars)[:limit] for text in texts]


def char_windows(text: str, size: int, overlap: float = 0.125) -> list[str]:
    """`text` in windows of at most `size` characters, each starting an eighth of a window before the
    last one ended, cut at a space where there is one."""
    if len(text) <= size:
        return [text]
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + size // 2, end)
            end = space if space > 0 else end
        out.append(text[start:end])
        if end >= len(text):
            break
        start = max(start + 1, end - int(size * overlap))
    return out


async def embed_async(embedder: TextEmbedder, texts: Sequence[str]) -> list[list[float]]:
    """`embedder.embed(texts)` without blocking the event loop. The local models run on threads of
    their own (batches, queries), awaited directly: through `asyncio.to_thread`, ingest batches
    waiting for the model held every thread of the loop's shared pool (min(32, cores + 4)), and a
    query's embedding queued behind them for seconds (`bench.load`)."""
    if not texts:
        return []
    with embedding("query" if len(texts) <= QUERY_TEXTS else "batch", len(texts)):
        submit = getattr(embedder, "submit", None)
        if submit is not None:
            return await asyncio.wrap_future(submit(texts))
        return await asyncio.to_thread(embedder.embed, texts)


QUERY_TEXTS = 4  # calls with this many texts or fewer are queries: embedded on a thread of their own
