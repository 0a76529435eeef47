"""Operational hooks: the foundation reports what it timed (a named Cypher statement, an embedder
call, an LLM call, a job run) to the observers a door installs, such as the Prometheus metrics of
`kg.http.metrics`. Nothing is imported here and nothing is kept: with no observer, a report costs a
loop over an empty tuple, so the store's hot path pays nothing measurable.

Labels are the names of code (a `cypher/` file, a purpose, a job kind), never a namespace or user
text: observers may export them to systems outside the tenant boundary.
"""

from __future__ import annotations

from typing import Protocol


class Observer(Protocol):
    def statement(self, name: str, seconds: float) -> None: ...

    def embed(self, kind: str, seconds: float) -> None: ...  # kind: "query" or "batch"

    def llm(self, purpose: str, seconds: float, input_tokens: int, output_tokens: int) -> None: ...

    def job(self, kind: str, outcome: str, seconds: float) -> None: ...


_OBSERVERS: tuple[Observer, ...] = ()


def add_observer(observer: Observer) -> None:
    global _OBSERVERS
    _OBSERVERS = (*_OBSERVERS, observer)


def remove_observer(observer: Observer) -> None:
    global _OBSERVERS
    _OBSERVERS = tuple(o for o in _OBSERVERS if o is not observer)


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


__all__ = ["Observer", "add_observer", "embed_done", "job_done", "llm_done", "remove_observer", "statement_done"]
