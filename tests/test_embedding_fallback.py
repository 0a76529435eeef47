"""The embedding fallback chain against the local fake Voyage endpoint: the primary fails, then
times out, then recovers; each answer says which model made the vectors and why. No database."""

from __future__ import annotations

import asyncio

import pytest

from kg.core.embedders.base import EmbeddingError
from kg.core.embedders.configured import embedder_for, fallback_for
from kg.core.embedders.fallback import FallbackChain
from kg.core.embedders.voyage import VoyageEmbedder
from kg.core.settings.tree import EmbeddingSettings
from tests.fake_llm import FakeLLM, fake_llm, recording

LOCAL = "local/all-MiniLM-L6-v2-int8"


def voyage_settings(fake: FakeLLM, **changes: object) -> EmbeddingSettings:
    return EmbeddingSettings(provider="voyage", voyage_api_key="pa-TESTKEY-never-log-me-0123",  # type: ignore[arg-type]
                             voyage_base_url=fake.url + "/v1", timeout_ms=300, **changes)


def test_voyage_makes_no_request_to_know_its_dimension(fake_llm: FakeLLM) -> None:
    embedder = VoyageEmbedder(voyage_settings(fake_llm))
    assert (embedder.name, embedder.dim) == ("voyage/voyage-3.5-lite", 1024)
    assert fake_llm.count() == 0


def test_an_unknown_voyage_model_is_probed_once_on_first_use(fake_llm: FakeLLM) -> None:
    fake_llm.script(recording("voyage/embeddings_ok"))
    embedder = VoyageEmbedder(voyage_settings(fake_llm, voyage_model="voyage-next"))
    assert fake_llm.count() == 0
    assert embedder.dim == 2 and embedder.dim == 2
    assert fake_llm.count("/v1/embeddings") == 1


def test_fails_then_times_out_then_recovers(fake_llm: FakeLLM) -> None:
    settings = voyage_settings(fake_llm)
    chain = FallbackChain(VoyageEmbedder(settings), fallback_for(settings))
    fake_llm.script(recording("voyage/error_500"), recording("voyage/embeddings_ok", delay_s=1.5),
                    recording("voyage/embeddings_ok"))

    failed = asyncio.run(chain.embed(["the sensor reads 21 degrees"]))
    assert failed.model == LOCAL and len(failed.vectors[0]) == 384 and chain.is_fallback(failed.model)
    assert failed.degraded is not None and "voyage/voyage-3.5-lite unavailable" in failed.degraded

    timed_out = asyncio.run(chain.embed(["the sensor reads 21 degrees"]))
    assert timed_out.model == LOCAL and "timed out" in (timed_out.degraded or "")
    assert timed_out.vectors == failed.vectors

    recovered = asyncio.run(chain.embed(["the sensor reads 21 degrees"]))
    assert (recovered.model, recovered.degraded, recovered.vectors) == ("voyage/voyage-3.5-lite", None, [[0.6, 0.8]])
    assert not chain.is_fallback(recovered.model)
    assert fake_llm.count("/v1/embeddings") == 3


def test_without_a_fallback_the_primary_error_is_raised(fake_llm: FakeLLM) -> None:
    settings = voyage_settings(fake_llm, fallback="none")
    assert fallback_for(settings) is None
    fake_llm.script(recording("voyage/error_500"))
    with pytest.raises(EmbeddingError, match="voyage/voyage-3.5-lite"):
        asyncio.run(FallbackChain(VoyageEmbedder(settings), None).embed(["x"]))


def test_a_local_primary_has_no_fallback() -> None:
    assert fallback_for(EmbeddingSettings()) is None
    assert embedder_for(EmbeddingSettings()).name == LOCAL
