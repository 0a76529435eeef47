"""Post-session extraction by the LLM backends, driven through the real instructor + anthropic/openai
SDKs against a local fake API; choosing a backend; calls and tokens per 100 turns."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from pydantic import SecretStr

from kg.core.prompts.extraction import EXTRACT_V1, ChunkInput, ChunkTurn, ExtractionResult
from kg.core.settings.memory import IndexingSettings
from kg.core.settings.tree import LLMService, Settings
from kg.ingest.extraction.chunking import chunks_for, turn_tokens
from kg.ingest.extraction.extractor import ExtractionFailed, Usage
from kg.ingest.extraction.llm import LLMExtractor, extractor_for
from tests.extraction_samples import T0, chunk
from tests.fake_llm import FakeLLM, Reply, anthropic_echo, fake_llm, recording

KEY = "sk-ant-api03-TESTKEY-never-log-me-0123456789"


def service(fake: FakeLLM, provider: str = "anthropic", **changes) -> LLMService:
    base = fake.url if provider == "anthropic" else f"{fake.url}/v1"
    fields = dict(
        provider=provider, model="claude-haiku-4-5" if provider == "anthropic" else "gpt-4o-mini",
        base_url=base, api_key=SecretStr(KEY), timeout_s=5.0, max_retries=2, transport_retries=2,
        backoff_initial_s=0.01, backoff_max_s=0.05,
    )
    return LLMService(**{**fields, **changes})


async def run(fake: FakeLLM, chunk: ChunkInput, provider: str = "anthropic", **changes) -> tuple[ExtractionResult, Usage]:
    extractor = LLMExtractor("test", service(fake, provider, **changes))
    try:
        return await extractor.extract(chunk)
    finally:
        await extractor.aclose()



def assert_dana(result: ExtractionResult) -> None:
    facts = {(f.subject, f.predicate, f.object) for f in result.facts}
    assert ("Dana", "lives_in", "Lisbon") in facts and ("Dana", "works_at", "Acme Robotics") in facts
    assert [c.rule_text for c in result.corrections] == ["Use uv instead of pip to install packages."]
    assert {e.type for e in result.entities} >= {"person", "place", "organization", "order"}



# --- LLM backends through the fake API -----------------------------------------------------

async def test_anthropic_tool_use_answer(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    fake_llm.script(recording("anthropic/messages_tool_use_ok"))
    result, usage = await run(fake_llm, chunk)
    assert_dana(result)
    assert usage == Usage(calls=1, input_tokens=2841, output_tokens=738)
    (request,) = fake_llm.requests
    assert request.path == "/v1/messages"
    body = request.body
    assert body["tool_choice"]["name"] == "ExtractionResult" and body["tools"][0]["name"] == "ExtractionResult"
    assert "long-term memory" in json.dumps(body["system"]) and body["model"] == "claude-haiku-4-5"
    assert '<turn id=\\"t1\\"' in request.text()


@pytest.mark.parametrize("first", ["anthropic/messages_tool_use_invalid", "anthropic/messages_text_only"])
async def test_anthropic_bad_answer_is_reasked(fake_llm: FakeLLM, chunk: ChunkInput, first: str) -> None:
    fake_llm.script(recording(first), recording("anthropic/messages_tool_use_ok"))
    result, usage = await run(fake_llm, chunk)
    assert_dana(result)
    assert fake_llm.count("/v1/messages") == 2 and usage.calls == 2
    reask = fake_llm.requests[1].body["messages"]
    assert len(reask) == 3 and reask[1]["role"] == "assistant"
    if first.endswith("invalid"):
        (tool_result,) = reask[2]["content"]
        assert tool_result["type"] == "tool_result" and tool_result["is_error"] is True
        assert "t42" in tool_result["content"] and "snake_case" in tool_result["content"]
    else:
        assert "no tool invocation" in reask[2]["content"]


async def test_anthropic_json_mode_malformed_then_good(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    fake_llm.script(recording("anthropic/messages_json_malformed"), recording("anthropic/messages_json_ok"))
    result, usage = await run(fake_llm, chunk, mode="json")
    assert_dana(result)
    assert usage.calls == 2 and "tools" not in fake_llm.requests[0].body
    assert "json_schema" in json.dumps(fake_llm.requests[0].body["system"])


async def test_validation_re_asks_are_bounded(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    fake_llm.script(*[recording("anthropic/messages_tool_use_invalid")] * 2)
    with pytest.raises(ExtractionFailed, match="did not validate after 2 attempt") as failed:
        await run(fake_llm, chunk, max_retries=1)
    assert fake_llm.count() == 2 and failed.value.attempts == 2 and failed.value.usage.calls == 2


@pytest.mark.parametrize(
    ("provider", "limited", "answer"),
    [("anthropic", "anthropic/error_429_rate_limit", "anthropic/messages_tool_use_ok"),
     ("anthropic", "anthropic/error_529_overloaded", "anthropic/messages_tool_use_ok"),
     ("openai", "openai/error_429_rate_limit", "openai/chat_tool_call_ok")],
)
async def test_rate_limit_then_success(fake_llm: FakeLLM, chunk: ChunkInput, provider: str, limited: str, answer: str) -> None:
    fake_llm.script(recording(limited), recording(answer))
    result, usage = await run(fake_llm, chunk, provider)  # Retry-After (3s) is capped by backoff_max_s
    assert_dana(result)
    assert fake_llm.count() == 2 and usage.calls == 1


@pytest.mark.parametrize(("provider", "error"), [("anthropic", "anthropic/error_500_api_error"),
                                                 ("openai", "openai/error_500_server_error")])
async def test_server_errors_exhaust_transport_retries(fake_llm: FakeLLM, chunk: ChunkInput, provider: str, error: str) -> None:
    fake_llm.script(*[recording(error)] * 3)
    with pytest.raises(ExtractionFailed, match="HTTP 500") as failed:
        await run(fake_llm, chunk, provider, transport_retries=2)
    assert fake_llm.count() == 3 and failed.value.attempts == 3 and fake_llm.remaining() == 0


async def test_slow_answer_times_out(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    fake_llm.script(*[recording("anthropic/messages_tool_use_ok", delay_s=5.0)] * 2)
    with pytest.raises(ExtractionFailed, match="timed out after 0.3s") as failed:
        await run(fake_llm, chunk, timeout_s=0.3, transport_retries=1)
    assert failed.value.attempts == 2 and fake_llm.count() == 2


async def test_body_that_is_not_json(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    garbled = Reply(200, '{"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "mess')  # a proxy cut the body short
    fake_llm.script(garbled, recording("anthropic/messages_tool_use_ok"))
    result, usage = await run(fake_llm, chunk)  # instructor re-sends it, within max_retries
    assert_dana(result)
    assert fake_llm.count() == 2 and usage.calls == 1
    fake_llm.script(*[garbled] * 2)
    with pytest.raises(ExtractionFailed, match="body was not JSON"):
        await run(fake_llm, chunk, max_retries=1)
    assert fake_llm.count() == 4


async def test_cut_off_answer_is_reported(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    fake_llm.script(recording("anthropic/messages_max_tokens"))
    with pytest.raises(ExtractionFailed, match="cut off at max_tokens=4096"):
        await run(fake_llm, chunk)
    assert fake_llm.count() == 1


@pytest.mark.parametrize(("provider", "error"), [("anthropic", "anthropic/error_401_authentication"),
                                                 ("openai", "openai/error_401_invalid_api_key")])
async def test_auth_failure_is_not_retried_and_the_key_never_leaks(
    fake_llm: FakeLLM, chunk: ChunkInput, caplog: pytest.LogCaptureFixture, provider: str, error: str
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_llm.script(recording(error))
    with pytest.raises(ExtractionFailed, match="HTTP 401") as failed:
        await run(fake_llm, chunk, provider)
    assert fake_llm.count() == 1
    sent = fake_llm.requests[0].headers
    assert KEY in (sent.get("x-api-key", "") + sent.get("authorization", ""))  # the key was used ...
    assert "Request options" in caplog.text  # the SDKs' debug logging was captured ...
    assert KEY not in caplog.text  # ... and the key is in none of it
    assert KEY not in str(failed.value) and KEY not in repr(failed.value) and "sk-test-" not in str(failed.value)


async def test_openai_tool_call_answer(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    fake_llm.script(recording("openai/chat_tool_call_ok"))
    result, usage = await run(fake_llm, chunk, "openai")
    assert_dana(result)
    assert usage == Usage(calls=1, input_tokens=2513, output_tokens=692)
    (request,) = fake_llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["tool_choice"] == {"type": "function", "function": {"name": "ExtractionResult"}}
    assert request.body["messages"][0]["role"] == "system"


@pytest.mark.parametrize("first", ["openai/chat_tool_call_malformed", "openai/chat_tool_call_invalid"])
async def test_openai_bad_tool_call_is_reasked(fake_llm: FakeLLM, chunk: ChunkInput, first: str) -> None:
    fake_llm.script(recording(first), recording("openai/chat_tool_call_ok"))
    result, usage = await run(fake_llm, chunk, "openai")
    assert_dana(result)
    assert usage.calls == 2 and usage.input_tokens == 2 * 2513
    tool_reply = fake_llm.requests[1].body["messages"][-1]
    assert tool_reply["role"] == "tool" and "Validation Error" in tool_reply["content"]


async def test_openai_compatible_json_mode(fake_llm: FakeLLM, chunk: ChunkInput) -> None:
    fake_llm.script(recording("openai/chat_json_malformed"), recording("openai/chat_json_ok"))
    result, usage = await run(fake_llm, chunk, "openai", model="llama3.1:8b", mode="json", api_key=None, temperature=0.0)
    assert_dana(result)
    first = fake_llm.requests[0]
    assert first.body["response_format"] == {"type": "json_object"} and first.body["temperature"] == 0.0
    assert "tools" not in first.body and usage.calls == 2
    assert first.headers["authorization"] == "Bearer not-needed"  # a local server without a key


# --- choosing a backend -----------------------------------------------------------------

def test_extractor_for_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    def settings(backend: str, **services: LLMService) -> Settings:
        return Settings.model_validate({"memory": {"indexing": {"backend": backend}}, "llm": {"services": services}})

    assert extractor_for(settings("offline")).backend == "offline"
    assert extractor_for(settings("auto")).backend == "offline"
    local = LLMService(provider="openai", model="qwen2.5:7b", base_url="http://127.0.0.1:11434/v1")
    chosen = extractor_for(settings("ollama", ollama=local))
    assert (chosen.backend, chosen.model, chosen.prompt_version) == ("ollama", "qwen2.5:7b", EXTRACT_V1)
    with pytest.raises(ValueError, match="not 'offline', 'auto' or a service"):
        extractor_for(settings("nope", ollama=local))
    with pytest.raises(ValueError, match="no api_key"):
        extractor_for(settings("claude", claude=LLMService()))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    auto = extractor_for(settings("auto", claude=LLMService(model="claude-haiku-4-5")))
    assert isinstance(auto, LLMExtractor) and (auto.backend, auto.model) == ("claude", "claude-haiku-4-5")
    assert KEY not in repr(auto) and KEY not in str(vars(auto))


# --- cost ------------------------------------------------------------------------------------

async def test_calls_and_tokens_per_100_turns(fake_llm: FakeLLM) -> None:
    """Not a timing test: what extraction of 100 realistic turns sends, with the default budget."""
    said = [
        "I moved to Lisbon in March and I'm still looking for a good coworking space near Alfama.",
        "Here are three coworking spaces near Alfama, with prices and opening hours for each of them, "
        "plus a note on which ones have quiet rooms for calls and reliable fibre internet.",
        "Order #A-{n} arrived damaged; the box was crushed and the lamp inside is broken. Can I get a replacement?",
        "I'm sorry to hear that. I've opened a replacement request for your order and you'll get a prepaid "
        "return label by email within the hour. Please keep the damaged item until the courier collects it.",
    ]
    session = [ChunkTurn(id=f"t{i}", idx=i, role="user" if i % 2 == 0 else "assistant",
                         speaker="Dana" if i % 2 == 0 else "Assistant", text=said[i % 4].format(n=88000 + i),
                         ts=T0 + timedelta(minutes=i)) for i in range(100)]
    indexing = IndexingSettings()
    chunks = chunks_for(indexing, "s", session)
    fake_llm.fallback = anthropic_echo
    extractor = LLMExtractor("test", service(fake_llm))
    total = Usage()
    try:
        for c in chunks:
            total = total + (await extractor.extract(c))[1]
    finally:
        await extractor.aclose()
    turn_tokens_total = sum(turn_tokens(t) for t in session)
    print(f"\n100 turns ({turn_tokens_total} turn tokens est., budget {indexing.chunk_token_budget}, "
          f"overlap {indexing.chunk_overlap}): {len(chunks)} chunk(s), {total.calls} LLM call(s), "
          f"{total.input_tokens} input tokens, {total.output_tokens} output tokens (4 chars/token estimate)")
    assert total.calls == len(chunks) == fake_llm.count()
    assert total.input_tokens > turn_tokens_total  # the prompt and schema ride on every call
