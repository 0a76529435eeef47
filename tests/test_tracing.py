"""OpenTelemetry tracing (`[telemetry] tracing`), read back through the SDK's in-memory exporter:
a request is one trace, from its HTTP span down to the spans of its Cypher statements; an incoming
`traceparent` continues; an MCP tool call (over HTTP, and over stdio from `kg mcp` itself), a job
run and an LLM call are spans; no namespace or user text is in any span name or attribute.

The in-memory exporter hangs off the process's global tracer provider (`exporter = "global"`, the
setting an application that configures OpenTelemetry itself uses). `kg mcp` runs in a process of
its own, so its spans are read from its standard error (`exporter = "console"`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install 'kg-memory[otel]')")

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from pydantic import SecretStr

from kg import AsyncMemory, cypher
from kg.core.extras import MissingExtra
from kg.core.prompts.extraction import ChunkInput
from kg.core.settings.base import UnknownSettingError
from kg.core.settings.tree import LLMService, Settings, TelemetrySettings
from kg.core.telemetry import hooks as telemetry
from kg.core.telemetry.tracing import Tracing
from kg.http import create_app
from kg.ingest.extraction.llm import LLMExtractor
from tests.extraction_samples import chunk
from tests.fake_llm import FakeLLM, fake_llm, recording
from tests.http_client import msg, running, settings_with

REPO = Path(__file__).resolve().parents[1]
NS_ROUTE = "/v1/namespaces/{namespace}"
QUESTION = "which database did zebrafinch choose for analytics"
TEXTS = ("Zebrafinch picked TimescaleDB for analytics.", "The rollout is planned for May.")
SESSION = "sess-zebra"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
GLOBAL = TelemetrySettings(tracing=True, exporter="global")
KEY = "sk-ant-api03-TESTKEY-never-log-me-0123456789"


@pytest.fixture(scope="session")
def exporter() -> InMemorySpanExporter:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> InMemorySpanExporter:
    exporter.clear()
    return exporter


def traced(**http: Any) -> Settings:
    return settings_with(keys={}, **http).model_copy(update={"telemetry": GLOBAL})


def traces(found: Sequence[ReadableSpan]) -> dict[int, list[ReadableSpan]]:
    by_trace: dict[int, list[ReadableSpan]] = {}
    for s in found:
        by_trace.setdefault(s.context.trace_id, []).append(s)
    return by_trace


def root_of(trace_spans: list[ReadableSpan]) -> ReadableSpan:
    """The trace's one span whose parent is outside it; every other span hangs below it."""
    ids = {s.context.span_id for s in trace_spans}
    roots = [s for s in trace_spans if s.parent is None or s.parent.span_id not in ids]
    assert len(roots) == 1, [s.name for s in roots]
    return roots[0]


def ancestors(span: ReadableSpan, trace_spans: list[ReadableSpan]) -> list[str]:
    by_id = {s.context.span_id: s for s in trace_spans}
    names = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


def assert_no_user_text(found: Iterable[ReadableSpan], *texts: str) -> None:
    words = {w.lower() for t in texts for w in t.replace(".", " ").split() if len(w) > 3} | {t.lower() for t in texts}
    for s in found:
        shown = [s.name, *(str(k) for k in (s.attributes or {})), *(str(v) for v in (s.attributes or {}).values())]
        for value in shown:
            assert not any(w in value.lower() for w in words), (s.name, value)


async def test_a_request_is_one_trace_from_its_http_span_down_to_its_statements(
        spans: InMemorySpanExporter, memory: AsyncMemory, namespace: str) -> None:
    async with running(create_app(traced(), memory=memory)) as client:
        r = await client.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [
            msg(TEXTS[0], 0, session_id=SESSION), msg(TEXTS[1], 1, session_id=SESSION)]})
        assert r.status_code == 200, r.text
        r = await client.get(f"/v1/namespaces/{namespace}/search", params={"q": QUESTION})
        assert r.status_code == 200 and r.json(), r.text
        r = await client.get(f"/v1/namespaces/{namespace}/search", params={"q": ""})
        assert r.status_code == 422

    found = spans.get_finished_spans()
    by_trace = traces(found)
    roots = {root_of(t).name: (root_of(t), t) for t in by_trace.values()}
    assert len(by_trace) == 3, sorted(roots)  # one trace per request, none for the start-up's statements
    assert set(roots) == {f"POST {NS_ROUTE}/messages", f"GET {NS_ROUTE}/search"}
    for root, _ in roots.values():
        assert root.kind is SpanKind.SERVER and root.parent is None
        assert root.attributes and root.attributes["http.route"] in (NS_ROUTE + "/messages", NS_ROUTE + "/search")

    search = next(t for t in by_trace.values() if root_of(t).attributes["http.response.status_code"] == 200
                  and root_of(t).name.startswith("GET"))
    names = {s.name for s in search}
    assert {"retrieval", "retrieval.lists", "embed query"} <= names
    statements = [s for s in search if s.attributes and "kg.cypher" in s.attributes]
    assert statements, names
    for s in statements:
        assert s.name == s.attributes["kg.cypher"] and cypher.load(s.name)  # named by its cypher/ file
        assert ancestors(s, search)[-1] == f"GET {NS_ROUTE}/search"
    listed = [s for s in statements if "retrieval.lists" in ancestors(s, search)]
    assert listed and all(ancestors(s, search)[:2] == ["retrieval.lists", "retrieval"] for s in listed)

    ingest = roots[f"POST {NS_ROUTE}/messages"][1]
    assert "turns/write" in {s.name for s in ingest}
    refused = [root_of(t) for t in by_trace.values() if root_of(t).attributes["http.response.status_code"] == 422]
    assert len(refused) == 1 and len(by_trace[refused[0].context.trace_id]) == 1  # refused before the database
    assert_no_user_text(found, namespace, QUESTION, SESSION, *TEXTS)


async def test_an_incoming_traceparent_is_continued(spans: InMemorySpanExporter, memory: AsyncMemory,
                                                    namespace: str) -> None:
    async with running(create_app(traced(), memory=memory)) as client:
        await client.post(f"/v1/namespaces/{namespace}/messages", json={"messages": [msg(TEXTS[0], 0)]})
        spans.clear()
        r = await client.get(f"/v1/namespaces/{namespace}/search", params={"q": QUESTION},
                             headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
        assert r.status_code == 200, r.text

    found = spans.get_finished_spans()
    assert {format(s.context.trace_id, "032x") for s in found} == {TRACE_ID}
    root = root_of(list(found))
    assert root.kind is SpanKind.SERVER and root.parent is not None and root.parent.is_remote
    assert format(root.parent.span_id, "016x") == PARENT_ID
    assert any(s.attributes and "kg.cypher" in s.attributes for s in found)


async def test_tracing_off_records_no_span(spans: InMemorySpanExporter, memory: AsyncMemory, namespace: str) -> None:
    """Off by default, even with a tracer provider in the process (FastAPI's own spans, which would
    hold the path and so the namespace, stay off too)."""
    assert Settings().telemetry.tracing is False
    async with running(create_app(settings_with(keys={}), memory=memory)) as client:
        r = await client.get(f"/v1/namespaces/{namespace}/search", params={"q": QUESTION})
        assert r.status_code in (200, 404)
    assert spans.get_finished_spans() == ()


async def test_an_mcp_tool_call_over_http_is_a_span_below_the_request(
        spans: InMemorySpanExporter, memory: AsyncMemory, namespace: str) -> None:
    async with running(create_app(traced(), memory=memory)) as client:
        r = await client.post("/mcp", headers={"accept": "application/json, text/event-stream"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "remember", "arguments": {"namespace": namespace, "subject": "zebrafinch",
                                                         "predicate": "uses", "object": "TimescaleDB"}}})
        assert r.status_code == 200 and "error" not in r.json(), r.text

    found = list(spans.get_finished_spans())
    (tool,) = [s for s in found if s.name == "execute_tool remember"]
    assert tool.attributes and tool.attributes["gen_ai.tool.name"] == "remember"
    assert ancestors(tool, found)[-1] == "POST /mcp"
    below = [s for s in found if s.attributes and "kg.cypher" in s.attributes and "execute_tool remember" in
             ancestors(s, found)]
    assert below, [s.name for s in found]
    assert_no_user_text(found, namespace, "zebrafinch", "TimescaleDB")


async def test_kg_mcp_over_stdio_traces_each_tool_call(spans: InMemorySpanExporter, tmp_path: Path,
                                                      memory: AsyncMemory, namespace: str) -> None:
    """`kg mcp` with `[telemetry] tracing` on: each tool call is a span holding its statements, in
    the trace of the client's request when the client sends its trace context (`_meta.traceparent`,
    as this test's client does); the server's spans are read from its standard error, where the
    console exporter writes."""
    env = {k: v for k, v in os.environ.items() if k.startswith(("KG_", "NEO4J_", "XDG_", "HF_", "HOME", "PATH"))}
    env.update({"PYTHONPATH": str(REPO), "KG_TELEMETRY__TRACING": "true", "KG_TELEMETRY__EXPORTER": "console"})
    params = StdioServerParameters(command=sys.executable, args=["-m", "kg.cli", "mcp", "-n", namespace],
                                   cwd=str(REPO), env=env)
    errors = tmp_path / "stderr"
    with errors.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            done = await client.call_tool("remember", {"namespace": namespace, "subject": "zebrafinch",
                                                       "predicate": "uses", "object": "TimescaleDB"})
            assert not done.is_error, done.content

    found = console_spans(errors.read_text())
    tool = [s for s in found if s["name"] == "execute_tool remember"]
    assert len(tool) == 1, errors.read_text()[-2000:]
    (sent,) = [s for s in spans.get_finished_spans() if s.name == "MCP send tools/call remember"]  # the client's
    assert tool[0]["context"]["trace_id"] == f"0x{sent.context.trace_id:032x}"
    assert tool[0]["parent_id"] == f"0x{sent.context.span_id:016x}"
    statements = [s for s in found if "kg.cypher" in s["attributes"]]
    assert statements and all(s["context"]["trace_id"] == tool[0]["context"]["trace_id"] for s in statements)
    assert all(cypher.load(s["name"]) for s in statements)
    for s in found:
        shown = json.dumps([s["name"], s["attributes"]])
        assert namespace not in shown and "zebrafinch" not in shown and "TimescaleDB" not in shown


def console_spans(text: str) -> list[dict[str, Any]]:
    """The spans the console exporter wrote (one JSON object each) among the other lines."""
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict) and "context" in value and "name" in value:
            found.append(value)
        at = text.find("{", end)
    return found


async def test_a_job_run_is_a_trace_of_its_own(spans: InMemorySpanExporter, memory: AsyncMemory,
                                               namespace: str) -> None:
    await memory.enqueue_job("embed_backfill", namespace, "turns")
    with Tracing(GLOBAL):
        report = await memory.run_jobs(sweep=False, namespace=namespace)
    assert report.done
    found = list(spans.get_finished_spans())
    (job,) = [s for s in found if s.name == "job embed_backfill"]
    assert job.parent is None and job.attributes and job.attributes["kg.job.outcome"] == "done"
    assert "jobs/complete" in {s.name for s in found if s.context.trace_id == job.context.trace_id}
    assert telemetry.tracer() is None  # removed when the work is over


def test_the_otlp_exporter_is_named_when_it_is_missing() -> None:
    try:
        import opentelemetry.exporter.otlp.proto.http
    except ImportError:
        pass
    else:
        pytest.skip("the OTLP exporter is installed here")
    with pytest.raises(MissingExtra, match="pip install opentelemetry-exporter-otlp-proto-http"):
        create_app(Settings(telemetry=TelemetrySettings(tracing=True)))


def test_a_mistyped_telemetry_key_is_refused() -> None:
    with pytest.raises(UnknownSettingError, match="'tracing'"):
        Settings(telemetry={"tracng": True})


async def test_an_llm_call_is_a_span_with_its_model_and_tokens(spans: InMemorySpanExporter, fake_llm: FakeLLM,
                                                               chunk: ChunkInput) -> None:
    """Through the real transport against the fake API: one span per `ask`, its retries inside."""
    fake_llm.script(recording("anthropic/error_429_rate_limit"), recording("anthropic/messages_tool_use_ok"))
    service = LLMService(provider="anthropic", model="claude-haiku-4-5", base_url=fake_llm.url,
                         api_key=SecretStr(KEY), transport_retries=2, backoff_initial_s=0.01, backoff_max_s=0.05)
    extractor = LLMExtractor("test", service)
    try:
        with Tracing(GLOBAL), telemetry.root_span("job index_session"):
            await extractor.extract(chunk)
    finally:
        await extractor.aclose()
    found = list(spans.get_finished_spans())
    (call,) = [s for s in found if s.name.startswith("llm ")]
    attributes = dict(call.attributes or {})
    assert call.name == f"llm {attributes['kg.llm.purpose']}" and ancestors(call, found) == ["job index_session"]
    assert (attributes["gen_ai.request.model"], attributes["gen_ai.provider.name"]) == ("claude-haiku-4-5", "anthropic")
    assert attributes["kg.llm.requests"] == 2  # the 429, then the answer
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (2841, 738)
    assert KEY not in json.dumps([s.name for s in found] + [str(dict(s.attributes or {})) for s in found])
    assert_no_user_text(found, *(t.text for t in chunk.turns))
