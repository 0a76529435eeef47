"""The LLM usage meter: what every LLM call cost, recorded by the one transport (`kg.core.llm.transport`).

Each answered request is an `LLMCall` (purpose, model, prompt version, tokens, latency), appended
to every `UsageMeter` opened with `metering()` around the work (a job, an indexing run, a
summarization): the meters follow the asyncio context, so a hook called deep inside a write is
counted on the job that caused it. No SDK is imported here, so the doors can read usage cheaply.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from kg.core.telemetry.hooks import llm_done

# -- the meter -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class LLMCall:
    """One answered request (a validation re-ask is a call of its own)."""

    purpose: str  # extraction, session, summary, rollup, judgments, adjudication, ...
    model: str
    prompt_version: str
    input_tokens: int
    output_tokens: int
    latency_ms: float


@dataclass
class UsageMeter:
    """The calls made while it was open (see `metering`)."""

    calls: list[LLMCall] = field(default_factory=list)

    @property
    def llm_calls(self) -> int:
        return len(self.calls)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.calls)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.calls)

    def totals(self) -> dict[str, int]:
        return {"llm_calls": self.llm_calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}

    def summary(self) -> dict[str, Any]:
        """Totals and the per-call records, as JSON-ready values (what jobs keep)."""
        return {**self.totals(), "calls": [asdict(c) for c in self.calls]}


_METERS: ContextVar[tuple[UsageMeter, ...]] = ContextVar("kg_llm_meters", default=())


@contextmanager
def metering(meter: UsageMeter | None = None) -> Iterator[UsageMeter]:
    """Record every LLM call made in this context (and tasks or threads started from it) in
    `meter`, besides the meters already open."""
    meter = meter if meter is not None else UsageMeter()
    token = _METERS.set((*_METERS.get(), meter))
    try:
        yield meter
    finally:
        _METERS.reset(token)


def add_usage(outputs: dict[str, Any], meter: UsageMeter, key: str = "llm") -> None:
    """Fold `meter` into `outputs[key]` (a job's pass outputs): totals and per-call records add up
    over the job's attempts."""
    if not meter.calls:
        return
    before = outputs.get(key) or {}
    calls = [*before.get("calls", []), *(asdict(c) for c in meter.calls)]
    outputs[key] = {"llm_calls": len(calls), "input_tokens": sum(c["input_tokens"] for c in calls),
                    "output_tokens": sum(c["output_tokens"] for c in calls), "calls": calls}


def record(call: LLMCall) -> None:
    for meter in _METERS.get():
        meter.calls.append(call)
    llm_done(call.purpose, call.latency_ms / 1000, call.input_tokens, call.output_tokens)


__all__ = ["LLMCall", "UsageMeter", "add_usage", "metering", "record"]
