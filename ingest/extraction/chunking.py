"""Routing a session to extraction requests by size, and merging the answers back.

A session whose turns fit `memory.indexing.chunk_token_budget` is one request. A longer one is
split on turn boundaries into chunks of at most that budget, each repeating the last
`chunk_overlap` share of the previous chunk so that a statement and its context straddling a
boundary is seen whole at least once. `merge` then counts an item seen in several chunks once.

Token counts are estimated offline (about four characters per token, plus the per-turn wrapper
the prompt adds); the budget bounds the turns only, not the fixed prompt and schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from pydantic import BaseModel

from kg.core.prompts.extraction import (
    ChunkInput,
    ChunkTurn,
    ExtractedCorrection,
    ExtractedDecision,
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelationship,
    ExtractionResult,
)
from kg.core.settings.memory import IndexingSettings

CHARS_PER_TOKEN = 4
TURN_OVERHEAD_TOKENS = 24  # the <turn id role speaker ts> wrapper around each turn's text
_TRUNCATED = " … [truncated for extraction]"


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def turn_tokens(turn: ChunkTurn) -> int:
    return TURN_OVERHEAD_TOKENS + estimate_tokens(turn.text) + estimate_tokens(turn.speaker or "")


def _fit(turn: ChunkTurn, budget: int) -> ChunkTurn:
    """A turn longer than the whole budget is cut (it is still stored whole elsewhere)."""
    if turn_tokens(turn) <= budget:
        return turn
    keep = max(0, (budget - TURN_OVERHEAD_TOKENS - estimate_tokens(turn.speaker or "")) * CHARS_PER_TOKEN)
    keep = max(0, keep - len(_TRUNCATED))
    return turn.model_copy(update={"text": turn.text[:keep] + _TRUNCATED})


def plan_chunks(
    session_id: str,
    turns: Iterable[ChunkTurn | tuple],
    *,
    token_budget: int,
    overlap: float,
    namespace: str = "default",
) -> list[ChunkInput]:
    """The extraction requests for one session, in turn order."""
    ordered = sorted((t if isinstance(t, ChunkTurn) else ChunkTurn.model_validate(t) for t in turns), key=lambda t: t.idx)
    if not ordered:
        return []
    ordered = [_fit(t, token_budget) for t in ordered]
    sizes = [turn_tokens(t) for t in ordered]
    bounds = _bounds(sizes, token_budget, int(token_budget * overlap))
    return [
        ChunkInput(
            session_id=session_id,
            namespace=namespace,
            turns=ordered[start:end],
            chunk_index=i,
            chunk_count=len(bounds),
        )
        for i, (start, end) in enumerate(bounds)
    ]


def chunks_for(
    settings: IndexingSettings, session_id: str, turns: Iterable[ChunkTurn | tuple], namespace: str = "default"
) -> list[ChunkInput]:
    return plan_chunks(
        session_id,
        turns,
        token_budget=settings.chunk_token_budget,
        overlap=settings.chunk_overlap,
        namespace=namespace,
    )


def _bounds(sizes: list[int], budget: int, overlap_tokens: int) -> list[tuple[int, int]]:
    n = len(sizes)
    if sum(sizes) <= budget:
        return [(0, n)]
    bounds: list[tuple[int, int]] = []
    start = 0
    while True:
        end, used = start, 0
        while end < n and (end == start or used + sizes[end] <= budget):
            used += sizes[end]
            end += 1
        bounds.append((start, end))
        if end >= n:
            return bounds
        nxt, carried = end, 0
        while nxt - 1 > start and carried + sizes[nxt - 1] <= overlap_tokens:
            nxt -= 1
            carried += sizes[nxt]
        while nxt < end and carried + sizes[end] > budget:  # the next chunk must reach a new turn
            carried -= sizes[nxt]
            nxt += 1
        start = nxt


# --- merging -----------------------------------------------------------------------------

_PUNCT = re.compile(r"[^\w\s@#.+-]")


def normalize(text: str) -> str:
    """The comparison key of a name or sentence: case, spacing and stray punctuation ignored."""
    return " ".join(_PUNCT.sub(" ", text.casefold()).split()).strip(" .")


M = TypeVar("M", bound=BaseModel)


def _union(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _merge_entity(a: ExtractedEntity, b: ExtractedEntity) -> ExtractedEntity:
    aliases = [x for x in _union(a.aliases, [b.name, *b.aliases]) if normalize(x) != normalize(a.name)]
    return a.model_copy(
        update={
            "type": a.type if a.type != "other" else b.type,
            "attributes": {**b.attributes, **a.attributes},
            "aliases": aliases,
            "evidence_turn_ids": _union(a.evidence_turn_ids, b.evidence_turn_ids),
        }
    )


def _merge_evidence(a: M, b: M) -> M:
    update: dict = {"evidence_turn_ids": _union(a.evidence_turn_ids, b.evidence_turn_ids)}  # type: ignore[attr-defined]
    if isinstance(a, ExtractedFact) and isinstance(b, ExtractedFact):
        update["quote"] = a.quote or b.quote
        update["valid_from"] = a.valid_from or b.valid_from
    return a.model_copy(update=update)


def _merge_entities(items: Iterable[ExtractedEntity]) -> list[ExtractedEntity]:
    merged: list[ExtractedEntity] = []
    index: dict[str, int] = {}
    for item in items:
        keys = [normalize(item.name), *(normalize(a) for a in item.aliases)]
        hit = next((index[k] for k in keys if k in index), None)
        if hit is None:
            hit = len(merged)
            merged.append(item)
        else:
            merged[hit] = _merge_entity(merged[hit], item)
        for k in [normalize(merged[hit].name), *(normalize(a) for a in merged[hit].aliases), *keys]:
            index.setdefault(k, hit)
    return merged


def _merge_keyed(items: Iterable[M], key) -> list[M]:
    merged: dict[tuple, M] = {}
    for item in items:
        k = key(item)
        merged[k] = _merge_evidence(merged[k], item) if k in merged else item
    return list(merged.values())


def fact_key(f: ExtractedFact) -> tuple:
    return (normalize(f.subject), f.predicate, normalize(f.object), f.retracts)


def relationship_key(r: ExtractedRelationship) -> tuple:
    return (normalize(r.from_), r.relation, normalize(r.to), r.retracts)


def correction_key(c: ExtractedCorrection) -> tuple:
    return (normalize(c.rule_text),)


def decision_key(d: ExtractedDecision) -> tuple:
    return (normalize(d.text),)


def merge(results: Sequence[ExtractionResult]) -> ExtractionResult:
    """One result for a session: items found in several (overlapping) chunks appear once."""
    return ExtractionResult(
        entities=_merge_entities(e for r in results for e in r.entities),
        facts=_merge_keyed((f for r in results for f in r.facts), fact_key),
        relationships=_merge_keyed((x for r in results for x in r.relationships), relationship_key),
        corrections=_merge_keyed((c for r in results for c in r.corrections), correction_key),
        decisions=_merge_keyed((d for r in results for d in r.decisions), decision_key),
    )
