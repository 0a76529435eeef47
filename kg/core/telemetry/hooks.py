"""Operational hooks, the one instrumentation layer of metrics and traces: the foundation times
what it runs (a named Cypher statement, an embedder call, an LLM call, a job run) and reports it to
the observers a door installs, such as the Prometheus metrics of `kg.http.metrics`; with a tracer
installed (`[telemetry] tracing`, `kg.core.telemetry.tracing`), the same hooks open a span around the work.
Nothing is imported here and nothing is kept: with no observer and no tracer, a hook costs about a
microsecond (a small object, a perf_counter pair, a loop over an empty tuple) beside a statement's
round trip of a millisecond or more, so the store's hot path pays nothing measurable.

Labels, span names and attributes are the names of code (a `cypher/` file, a purpose, a job kind,
a route template), counts and codes, never a namespace or user text: observers and tracers may
export them to systems outside the tenant boundary.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Protocol

Attribute = str | int | float | bool
Attributes = Iterable[tuple[str, Attribute]]


class Observer(Protocol):
    def statement(self, name: str, seconds: float) -> None: ...

    def embed(self, kind: str, seconds: float) -> None: ...  # kind: "query" or "batch"

    def llm(self, purpose: str, seconds: float, input_tokens: int, output_tokens: int) -> None: ...

    def job(self, kind: str, outcome: str, seconds: float) -> None: ...


class Span(Protocol):
    """An open span: what the code inside it may add once it knows (a route, a status, tokens)."""

    def set(self, key: str, value: Attribute) -> None: ...

    def rename(self, name: str) -> None: ...

    def fail(self, error_type: str) -> None:
        """Mark the span failed; `error_type` is a class name or a status code, never a message."""
        ...


class Tracer(Protocol):
    def span(self, name: str, attributes: Attributes = (), headers: Mapping[str, str] | None = None,
             root: bool = False) -> AbstractContextManager[Span]:
        """A span current inside the block. With `headers` (an incoming request's): a server span
        continuing the trace their `traceparent` names, else starting one. Otherwise a child of the
        current span; with none current, a new trace if `root`, else no span (a statement of a
        background poll or of start-up is no trace of its own)."""
        ...


class _NoSpan:
    def set(self, key: str, value: Attribute) -> None:
        pass

    def rename(self, name: str) -> None:
        pass

    def fail(self, error_type: str) -> None:
        pass


NO_SPAN: Span = _NoSpan()
_NOTHING: AbstractContextManager[Span] = nullcontext(NO_SPAN)  # reusable: it keeps no state
_OBSERVERS: tuple[Observer, ...] = ()
_TRACER: Tracer | None = None


def add_observer(observer: Observer) -> None:
    global _OBSERVERS
    _OBSERVERS = (*_OBSERVERS, observer)


def remove_observer(observer: Observer) -> None:
    global _OBSERVERS
    _OBSERVERS = tuple(o for o in _OBSERVERS if o is not observer)


def set_tracer(tracer: Tracer | None) -> None:
    """Install the process's tracer (`kg.core.telemetry.tracing`); None removes it."""
    global _TRACER
    _TRACER = tracer


def tracer() -> Tracer | None:
    return _TRACER


# -- spans ----------------------------------------------------------------------------------------
def span(name: str, attributes: Attributes = ()) -> AbstractContextManager[Span]:
    """A span around the block, inside the current trace (a stage of the work a request does)."""
    t = _TRACER
    return _NOTHING if t is None else t.span(name, attributes)


def root_span(name: str, attributes: Attributes = ()) -> AbstractContextManager[Span]:
    """A span around the block that starts a trace when none is current (a tool call, a job run)."""
    t = _TRACER
    return _NOTHING if t is None else t.span(name, attributes, root=True)


def server_span(name: str, headers: Mapping[str, str], attributes: Attributes = ()) -> AbstractContextManager[Span]:
    """The span of one incoming request, continuing the caller's trace (W3C `traceparent`)."""
    t = _TRACER
    return _NOTHING if t is None else t.span(name, attributes, headers)


class _Timed:
    """Times one call for the observers (on success) and, with a tracer, spans it; the span's name and
    attributes are built only then."""

    __slots__ = ("_label", "_started", "_span")
    _span: AbstractContextManager[Span] | None

    def __init__(self, label: str) -> None:
        self._label = label

    def __enter__(self) -> Span:
        t = _TRACER
        self._span = None if t is None else t.span(*self._named())
        opened = NO_SPAN if self._span is None else self._span.__enter__()
        self._started = time.perf_counter()
        return opened

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        seconds = time.perf_counter() - self._started
        if self._span is not None:
            self._span.__exit__(kind, exc, tb)
        if kind is None:
            self._report(self._label, seconds)

    def _named(self) -> tuple[str, Attributes]:
        raise NotImplementedError

    def _report(self, label: str, seconds: float) -> None:
        raise NotImplementedError


class _Statement(_Timed):
    __slots__ = ()

    def _named(self) -> tuple[str, Attributes]:
        return self._label, (("db.system.name", "neo4j"), ("kg.cypher", self._label))

    def _report(self, label: str, seconds: float) -> None:
        statement_done(label, seconds)


class _Embedding(_Timed):
    __slots__ = ("_texts",)

    def __init__(self, kind: str, texts: int) -> None:
        self._label, self._texts = kind, texts

    def _named(self) -> tuple[str, Attributes]:
        return f"embed {self._label}", (("kg.embed.kind", self._label), ("kg.embed.texts", self._texts))

    def _report(self, label: str, seconds: float) -> None:
        embed_done(label, seconds)


def statement(name: str) -> AbstractContextManager[Span]:
    """Around one named Cypher statement (`name`: its `cypher/` file, the span's name too)."""
    return _Statement(name)


def embedding(kind: str, texts: int) -> AbstractContextManager[Span]:
    """Around one embedder call; `kind` is "query" (a few texts) or "batch"."""
    return _Embedding(kind, texts)


# -- reports --------------------------------------------------------------------------------------
def statement_done(name: str, seconds: float) -> None:
    for o in _OBSERVERS:
        o.statement(name, seconds)


def embed_done(kind: str, seconds: float) -> None:
    for o in _OBSERVERS:
        o.embed(kind, seconds)


def llm_done(purpose: str, seconds: float, input_tokens: int, output_tokens: int) -> None:
    for o in _OBSERVERS:
        o.llm(purpose, seconds, input_tokens, output_tokens)


def job_done(kind: str, outcome: str, seconds: float) -> None:
    for o in _OBSERVERS:
        o.job(kind, outcome, seconds)


__all__ = ["NO_SPAN", "Attribute", "Attributes", "Observer", "Span", "Tracer", "add_observer", "embed_done",
           "embedding", "job_done", "llm_done", "remove_observer", "root_span", "server_span", "set_tracer", "span",
           "statement", "statement_done", "tracer"]
