"""Context keys: each turn is also searchable as itself with its neighbours, speakers named.

A question is often answered by a turn that only makes sense beside the one before it ("Who was
it?" / "My sister"); the context key lets both words meet. It keeps the turn itself first: its text
leads (so a long turn's key is its own words, whatever its neighbours), then each neighbour within
`context_turns`, in order and clipped to the part nearest the turn: the end of one before it (what
it answers), the start of one after it. Its vector is not embedded again: it is the turn's own
vector plus `context_weight` times each neighbour's, normalized, so closing a session embeds nothing
and a turn's key never pushes its own words out of the model's window (on LoCoMo this matched
embedding the key's text: turn recall@10 0.752 against 0.754). Keys are computed when a session is
summarized (its neighbours are known by then); until then the turn's own key stands in for it, and
retrieval fuses the context lists beside the turn's own lists, never instead of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kg.core.prompts.extraction import ChunkTurn

NEIGHBOUR_CHARS = 200
REPLY_CHARS = 500  # a reply up to this long may need its question to be understood ...
QUESTION_CHARS = 200  # ... when the question is this short: a longer turn ending in "?" is an answer with a follow-up


def short_replies(turns: Sequence[ChunkTurn]) -> list[bool]:
    """For each turn of one session (in order): it answers the turn before it, a short question, and
    is not long itself ("My sister."), an exchange of conversation, so it may be found through that
    question's words (`Boosts.answer`). A long reply says enough in its own words: on LongMemEval-S,
    where the assistant answers the user's questions at length, passing them the question's score
    filled the top 10 with answers (turn recall@10 0.74 against 0.87 without, on 20 questions). A long
    turn that ends with a question is an answer closing on a follow-up ("... Would you like more
    tips?"), whose last words say little of the reply after it: without the question's bound, replies
    up to 500 characters cost LongMemEval-S (60 questions) 0.006 of turn recall@10 and 0.017 of
    session recall@5; with it, nothing, and LoCoMo gains 0.005 and 0.003 (docs/benchmarks.md)."""
    def chars(text: str) -> int:
        return len(" ".join(text.split()))

    return [i > 0 and turns[i - 1].text.rstrip().endswith("?") and chars(turns[i - 1].text) <= QUESTION_CHARS
            and chars(t.text) <= REPLY_CHARS for i, t in enumerate(turns)]


def _line(turn: ChunkTurn, attachments: str, clip: str | None) -> str:
    """`clip`: None, the whole text; "head", its start; "tail", its end (each about NEIGHBOUR_CHARS)."""
    text = " ".join(turn.text.split())
    if clip == "head" and len(text) > NEIGHBOUR_CHARS:
        text = text[: NEIGHBOUR_CHARS - 1].rsplit(" ", 1)[0] + "…"
    elif clip == "tail" and len(text) > NEIGHBOUR_CHARS:
        text = "…" + text[-(NEIGHBOUR_CHARS - 1):].split(" ", 1)[-1]
    return f"{turn.speaker or turn.role}: {text}{attachments}"


def context_texts(turns: Sequence[ChunkTurn], width: int, attachments: Sequence[str] = ()) -> list[str]:
    """For each turn of one session (in order): its own line, then its neighbours within `width`
    either side, in order, each clipped to its part nearest the turn. `attachments`: per turn, its
    attachments as keys show them (`kg.ingest.turn_keys.attachment_text`)."""
    shown = list(attachments) or [""] * len(turns)
    out = []
    for i, turn in enumerate(turns):
        around = [j for j in range(max(0, i - width), min(len(turns), i + width + 1)) if j != i]
        out.append("\n".join([_line(turn, shown[i], None)] + [_line(turns[j], shown[j], "tail" if j < i else "head")
                                                               for j in around]))
    return out


def context_vectors(vectors: Sequence[Sequence[float] | None], width: int, weight: float
                    ) -> list[list[float] | None]:
    """For each turn of one session (in order, its own vector or None): its own vector plus `weight`
    times each of its neighbours' within `width` either side, unit length. None where the turn has
    no vector (embedded by the fallback model: its own stands in)."""
    have = [np.asarray(v, dtype=np.float64) if v is not None else None for v in vectors]
    out: list[list[float] | None] = []
    for i, own in enumerate(have):
        if own is None:
            out.append(None)
            continue
        around = [v for j in range(max(0, i - width), min(len(have), i + width + 1)) if j != i
                  and (v := have[j]) is not None and len(v) == len(own)]
        key = own + weight * np.sum(around, axis=0) if around and weight else own
        norm = float(np.linalg.norm(key))
        out.append((key / norm if norm else own).tolist())
    return out


def quoted_vector(vectors: Sequence[Sequence[float] | None], dim: int) -> list[float] | None:
    """An extractive summary's vector: the unit mean of the vectors of the turns it quotes (closing
    embeds nothing; `kg reembed` makes it again from the turns' new vectors). None unless there are
    some and each is there with `dim` dimensions (the embedder's own, not the fallback's): then the
    summary's text is embedded instead."""
    if not vectors or any(v is None or len(v) != dim for v in vectors):
        return None
    mean = np.mean(np.asarray(vectors, dtype=np.float64), axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).tolist() if norm else None
