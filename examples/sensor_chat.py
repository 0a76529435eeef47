"""What the framework examples share: the conversation they play (monday's session says two things,
friday's asks about the first), the line each exchange prints, and the start of a run. Each example's
`run(memory, namespace)` is its own (the tests call it); only this frame is here."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable

from kg import Memory

CHAT = [("monday", "We picked TimescaleDB for the sensor data."),
        ("monday", "Maya owns the ingestion service."),
        ("friday", "Which database did we pick for the sensors?")]


def said(prompt: str, reply: object, session: str | None = None) -> str:
    """One exchange as the examples print it: `[session] > prompt`, then the reply."""
    return f"{f'[{session}] ' if session else ''}> {prompt}\n  {reply}"


def main(run: Callable[[Memory, str], Any], namespace: str, clean: str | None = None) -> None:
    """Runs an example in `namespace`, deleted first (`clean`: the namespace it actually writes) so each
    run starts clean, and prints its lines."""
    with Memory() as memory:
        memory.delete_namespace(clean or namespace)
        lines = run(memory, namespace)
        print("\n".join(asyncio.run(lines) if inspect.iscoroutine(lines) else lines))
