"""One extraction result for a session from the answers of its overlapping chunks: an entity, fact,
relationship, correction or decision seen in several chunks counts once, with the union of its
evidence (`normalize` is the comparison key of a name or sentence)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from pydantic import BaseModel

from kg.core.prompts import extraction as found

_PUNCT = re.compile(r"[^\w\s@#.+-]")


def normalize(text: str) -> str:
    """The comparison key of a name or sentence: case, spacing and stray punctuation ignored."""
    return " ".join(_PUNCT.sub(" ", text.casefold()).split()).strip(" .")


M = TypeVar("M", bound=BaseModel)


def _union(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _merge_entity(a: found.ExtractedEntity, b: found.ExtractedEntity) -> found.ExtractedEntity:
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
    if isinstance(a, found.ExtractedFact) and isinstance(b, found.ExtractedFact):
        update["quote"] = a.quote or b.quote
        update["valid_from"] = a.valid_from or b.valid_from
    return a.model_copy(update=update)


def _merge_entities(items: Iterable[found.ExtractedEntity]) -> list[found.ExtractedEntity]:
    merged: list[found.ExtractedEntity] = []
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


def fact_key(f: found.ExtractedFact) -> tuple:
    return (normalize(f.subject), f.predicate, normalize(f.object), f.retracts)


def relationship_key(r: found.ExtractedRelationship) -> tuple:
    return (normalize(r.from_), r.relation, normalize(r.to), r.retracts)


def correction_key(c: found.ExtractedCorrection) -> tuple:
    return (normalize(c.rule_text),)


def decision_key(d: found.ExtractedDecision) -> tuple:
    return (normalize(d.text),)


def merge(results: Sequence[found.ExtractionResult]) -> found.ExtractionResult:
    """One result for a session: items found in several (overlapping) chunks appear once."""
    return found.ExtractionResult(
        entities=_merge_entities(e for r in results for e in r.entities),
        facts=_merge_keyed((f for r in results for f in r.facts), fact_key),
        relationships=_merge_keyed((x for r in results for x in r.relationships), relationship_key),
        corrections=_merge_keyed((c for r in results for c in r.corrections), correction_key),
        decisions=_merge_keyed((d for r in results for d in r.decisions), decision_key),
    )
