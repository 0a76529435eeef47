"""OpenTelemetry tracing (`[telemetry] tracing = true`, the `otel` extra): the tracer that
`kg.core.telemetry.hooks` opens its spans with. A door builds one `Tracing` when the setting is on and
installs it while it runs (the HTTP app's lifespan, `kg mcp`, the job workers of `kg serve`); nothing
imports this module, or OpenTelemetry, otherwise.

Spans go to the exporter `[telemetry] exporter` names (OTLP over HTTP, standard error) through an
SDK tracer provider of kg's own, or to the process's global provider ("global") when the embedding
application or `opentelemetry-instrument` set one up. An exception marks its span failed with the
exception's class name only: messages can quote user text.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from kg.core.extras import MissingExtra, package_version, require

require("otel", "opentelemetry", "opentelemetry.sdk")

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from kg.core.settings.tree import TelemetrySettings
from kg.core.telemetry import hooks as telemetry

W3C = TraceContextTextMapPropagator()
OTLP_PACKAGE = "opentelemetry-exporter-otlp-proto-http"


class _Span:
    """One OpenTelemetry span as `kg.core.telemetry.hooks.Span`, current while its block runs."""

    __slots__ = ("_tracer", "_name", "_attributes", "_headers", "_root", "_span", "_token")

    def __init__(self, tracer: trace.Tracer, name: str, attributes: telemetry.Attributes,
                 headers: Mapping[str, str] | None, root: bool) -> None:
        self._tracer, self._name, self._attributes = tracer, name, attributes
        self._headers, self._root = headers, root
        self._span: trace.Span | None = None
        self._token: object = None

    def __enter__(self) -> telemetry.Span:
        if self._headers is not None:  # a request: the caller's trace, or a new one (never the ambient span)
            parent: otel_context.Context | None = W3C.extract(self._headers)
            kind = SpanKind.SERVER
        else:
            parent, kind = None, SpanKind.INTERNAL
            if not self._root and not trace.get_current_span().get_span_context().is_valid:
                return telemetry.NO_SPAN
        span = self._tracer.start_span(self._name, context=parent, kind=kind, attributes=dict(self._attributes),
                                       record_exception=False, set_status_on_exception=False)
        self._span = span
        self._token = otel_context.attach(trace.set_span_in_context(span, parent))
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        span = self._span
        if span is None:
            return
        if kind is not None:
            self.fail(kind.__qualname__)
        span.end()
        otel_context.detach(self._token)  # type: ignore[arg-type]  # the token attach returned

    # -- kg.core.telemetry.hooks.Span --------------------------------------------------------------
    def set(self, key: str, value: telemetry.Attribute) -> None:
        if self._span is not None:
            self._span.set_attribute(key, value)

    def rename(self, name: str) -> None:
        if self._span is not None:
            self._span.update_name(name)

    def fail(self, error_type: str) -> None:
        if self._span is not None:
            self._span.set_attribute("error.type", error_type)
            self._span.set_status(Status(StatusCode.ERROR))


class OtelTracer:
    """`kg.core.telemetry.hooks.Tracer` over an OpenTelemetry tracer."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer

    def span(self, name: str, attributes: telemetry.Attributes = (), headers: Mapping[str, str] | None = None,
             root: bool = False) -> _Span:
        return _Span(self.tracer, name, attributes, headers, root)


class Tracing:
    """The tracing of one door: built from `[telemetry]` (a missing exporter fails here, at start-up),
    installed by `start`, flushed and removed by `stop`."""

    def __init__(self, settings: TelemetrySettings) -> None:
        self.provider, self.own = _provider(settings)
        self.tracer = OtelTracer(self.provider.get_tracer("kg-memory", package_version()))

    def start(self) -> None:
        telemetry.set_tracer(self.tracer)

    def stop(self) -> None:
        if telemetry.tracer() is self.tracer:
            telemetry.set_tracer(None)
        if self.own:
            self.provider.force_flush()  # type: ignore[attr-defined]  # the SDK's provider

    def __enter__(self) -> "Tracing":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _provider(settings: TelemetrySettings) -> tuple[trace.TracerProvider, bool]:
    """The provider the spans go to, and whether kg built it (and so flushes it)."""
    if settings.exporter == "global":
        return trace.get_tracer_provider(), False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    exporter: SpanExporter
    if settings.exporter == "console":
        exporter = ConsoleSpanExporter(out=sys.stderr)  # stdout is the protocol's under `kg mcp`
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise MissingExtra(f'[telemetry] exporter = "otlp" needs the package {OTLP_PACKAGE} (pip install '
                               f'{OTLP_PACKAGE}); or set exporter to "console" or "global"',
                               name="opentelemetry.exporter.otlp") from None
        exporter = OTLPSpanExporter()  # the endpoint: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, else localhost:4318
    provider = TracerProvider(resource=Resource.create({"service.name": settings.service_name,
                                                        "service.version": package_version()}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider, True


__all__ = ["OtelTracer", "Tracing"]
