"""Every Python block in README.md and docs/ runs against the local Neo4j, unless an HTML comment
`<!-- not runnable: reason -->` right before it says why it cannot: a renamed parameter then breaks
this test instead of a reader.

Each block runs as the body of a coroutine (top-level `await` and `async with` are allowed) in a
namespace of its own (the docs' "acme" is replaced by it, and deleted afterwards) that already holds
the sessions "retro-1" and "session-12" with one turn each. A block may use, without defining them:
`memory` (an open `AsyncMemory`), `ts` (now, UTC), `turn` (the turn of "session-12"), `UTC`,
`datetime`, `timezone` and `system_prompt` (an empty string)."""

from __future__ import annotations

import ast
import re
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from kg import AsyncMemory

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:<!-- not runnable: (?P<why>[^>]+?) -->\s*\n)?```python\n(?P<code>.*?)```", re.S)


def python_blocks() -> list[tuple[str, str, str | None]]:
    """(where, code, why it is not runnable or None) for each Python block of the docs."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code"))
            found.append((f"{path.name}:{line}", match["code"], match["why"]))
    return found


BLOCKS = python_blocks()


def test_the_docs_hold_python_blocks_and_every_skip_says_why() -> None:
    assert len(BLOCKS) >= 9
    assert all(why is None or len(why.split()) >= 3 for _, _, why in BLOCKS)


@pytest.mark.parametrize(("where", "code", "why"), BLOCKS, ids=[where for where, _, _ in BLOCKS])
async def test_a_python_block_of_the_docs_runs(memory: AsyncMemory, where: str, code: str, why: str | None) -> None:
    if why is not None:
        pytest.skip(f"not runnable: {why}")
    namespace = f"docs-{uuid.uuid4().hex[:12]}"
    now = datetime.now(timezone.utc)
    try:
        await memory.add_turns(namespace, "retro-1", [{"role": "user", "text": "We picked TimescaleDB.", "ts": now}])
        await memory.add_turns(namespace, "session-12", [{"role": "user", "text": "Use uv, not pip.", "ts": now}])
        [turn] = await memory.turns(namespace, "session-12")
        scope: dict[str, Any] = {"memory": memory, "ts": now, "turn": turn, "UTC": timezone.utc,
                                 "datetime": datetime, "timezone": timezone, "system_prompt": "",
                                 "__name__": "docs_block"}
        source = code.replace('"acme"', repr(namespace))
        compiled = compile(source, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(compiled, scope)  # noqa: S307 - the docs' own code, which is the point
        if result is not None:
            await result
    finally:
        await memory.delete_namespace(namespace)
