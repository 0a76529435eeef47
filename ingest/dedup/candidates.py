"""Where candidates come from: the `CandidateSource` protocol and an in-memory implementation.

A source only retrieves (blocking, for recall); the stages decide (for precision). The Neo4j
source answers the same four lookups from indexes: name/alias keys, identifier values, a
full-text index for spelling neighbours, a vector index for meaning neighbours.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from rapidfuzz import fuzz, process

from .model import Entity
from .names import compact_name, is_low_information


class CandidateSource(Protocol):
    def by_key(self, entity_type: str, key: str) -> list[Entity]:
        """Entities of the type holding this exact or alias key ("key:acme", "nick:robert cruz")."""
        ...

    def by_identifier(self, kind: str, value: str) -> list[Entity]:
        """Entities (of any type) holding this normalized identifier."""
        ...

    def fuzzy_candidates(self, entity_type: str, name: str, limit: int) -> list[Entity]:
        """Entities of the type whose names are spelled like `name` (compact form), best first."""
        ...

    def nearest(self, entity_type: str, vector: Sequence[float], k: int) -> list[tuple[Entity, float]]:
        """Entities of the type whose name vectors are closest (cosine), best first."""
        ...

    def save(self, entity: Entity) -> None:
        """Store a new or merged entity and (re)index its keys, identifiers, names and vectors."""
        ...


class InMemoryCandidateSource:
    """Dictionaries and a brute-force scan; fine for evaluation and tests, not for millions."""

    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self._keys: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._identifiers: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._spellings: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        self._vectors: dict[str, list[tuple[str, np.ndarray]]] = defaultdict(list)

    def by_key(self, entity_type: str, key: str) -> list[Entity]:
        return [self.entities[i] for i in sorted(self._keys.get((entity_type, key), ()))]

    def by_identifier(self, kind: str, value: str) -> list[Entity]:
        return [self.entities[i] for i in sorted(self._identifiers.get((kind, value), ()))]

    def fuzzy_candidates(self, entity_type: str, name: str, limit: int) -> list[Entity]:
        spellings = self._spellings.get(entity_type)
        if not spellings:
            return []
        query = compact_name(name, entity_type)
        found: list[Entity] = []
        for spelling, _score, _ in process.extract(query, list(spellings), scorer=fuzz.ratio, limit=limit):
            for entity_id in sorted(spellings[spelling]):
                if self.entities[entity_id] not in found:
                    found.append(self.entities[entity_id])
        return found[:limit]

    def nearest(self, entity_type: str, vector: Sequence[float], k: int) -> list[tuple[Entity, float]]:
        rows = self._vectors.get(entity_type)
        if not rows:
            return []
        matrix = np.stack([v for _, v in rows])
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        best: dict[str, float] = {}
        for index in np.argsort(-scores):
            entity_id = rows[index][0]
            best.setdefault(entity_id, float(scores[index]))
            if len(best) >= k:
                break
        return [(self.entities[i], s) for i, s in best.items()]

    def save(self, entity: Entity) -> None:
        previous = self.entities.get(entity.id)
        self.entities[entity.id] = entity
        for key in entity.keys - (previous.keys if previous else frozenset()):
            self._keys[(entity.type, key)].add(entity.id)
        for kind, values in entity.identifiers.items():
            for value in values:
                self._identifiers[(kind, value)].add(entity.id)
        for name in entity.names:
            if not is_low_information(name, entity.type):
                self._spellings[entity.type][compact_name(name, entity.type)].add(entity.id)
        known = len(previous.vectors) if previous else 0
        for vector in entity.vectors[known:]:
            self._vectors[entity.type].append((entity.id, np.asarray(vector, dtype=np.float32)))
