"""Context keys: each turn is also searchable as itself with its neighbours, speakers named.

A question is often answered by a turn that only makes sense after the one before it ("Who was
it?" / "My sister"); the context key lets both words meet. Keys are computed when a session is
summarized (its neighbours are known by then); until then the turn's own key finds it.
"""

from __future__ import annotations

from collections.abc import Sequence

from kg.ingest.extraction.models import ChunkTurn

NEIGHBOUR_CHARS = 300


def _line(turn: ChunkTurn, attachments: str, clip: bool) -> str:
    text = " ".join(turn.text.split())
    if clip and len(text) > NEIGHBOUR_CHARS:
        text = text[: NEIGHBOUR_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f"{turn.speaker or turn.role}: {text}{attachments}"


def context_texts(turns: Sequence[ChunkTurn], width: int, attachments: Sequence[str] = ()) -> list[str]:
    """For each turn of one session (in order): its window of `width` turns either side.
    `attachments`: per turn, its attachments as keys show them (`kg.ingest.turn_keys.attachment_text`)."""
    shown = list(attachments) or [""] * len(turns)
    out = []
    for i, turn in enumerate(turns):
        lo, hi = max(0, i - width), min(len(turns), i + width + 1)
        out.append("\n".join(_line(turns[j], shown[j], clip=j != i) for j in range(lo, hi)))
    return out

