"""Pseudo-relevance feedback (`Recipe.feedback_turns`): stage 2 reads its dense lists again with the
query's vector moved toward the own vectors of the turns it ranked first (Rocchio's rule), then fuses
again. A question and its answer seldom share words ("what did Caroline research?" / "I've been
looking into adoption agencies"); the turns ranked first carry the answer's vocabulary, so the
evidence that shares it rises. Only the turns' order inside the sessions stage 1 chose moves:
stage 1 ranks by the question alone, as moving it there drifted to the first sessions' topic."""

from __future__ import annotations

from typing import Any

import numpy as np

from kg.core.store.store import Store

from .vectors import NamespaceVectors, unit_rows


async def vector_rows(store: Store, ids: list[str], known: dict[str, list[Any]] | None = None,
                      vectors: NamespaceVectors | None = None, namespace: str = "") -> dict[str, list[Any]]:
    """Rows of `retrieval/turn_vectors` ([id, role, own vector, later parts]) for `ids`: those in
    `known` (read already by this search) as they are, the others from `vectors`, the cache the search
    read `namespace` from, when it holds them all, else from the store."""
    known = known or {}
    out = {i: known[i] for i in ids if i in known}
    missing = [i for i in ids if i not in known]
    if not missing:
        return out
    found = vectors.turn_vectors(namespace, missing) if vectors is not None else None
    if found is None:
        found = {r[0]: r for r in (await store.read_row("retrieval/turn_vectors", ids=missing)).get("turns", [])}
    return {**out, **found}


def moved(vector: list[float], rows: list[list[Any]], weight: float) -> list[float] | None:
    """The unit query vector plus `weight` times the unit mean of the rows' own vectors, at unit
    length; None when no row has a vector."""
    found = [r[2] for r in rows if r[2]]
    if not found or not weight:
        return None
    centre = unit_rows(unit_rows(found).sum(axis=0, keepdims=True))[0]
    out = unit_rows([vector])[0] + weight * centre
    return (out / np.linalg.norm(out)).tolist()
