"""Shared samples of the extraction tests: the recorded Dana chunk (a fixture) and synthetic turns."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kg.core.prompts.extraction import ChunkInput, ChunkTurn

RECORDINGS = Path(__file__).parent / "recordings"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def chunk() -> ChunkInput:
    return ChunkInput.model_validate_json((RECORDINGS / "chunk_dana.json").read_text())


def turns(n: int, words: int = 30) -> list[ChunkTurn]:
    return [
        ChunkTurn(id=f"t{i}", idx=i, role="user" if i % 2 == 0 else "assistant", speaker="Dana" if i % 2 == 0 else "Bot",
                  text=" ".join(f"word{i}_{j}" for j in range(words)), ts=T0 + timedelta(minutes=i))
        for i in range(n)
    ]

