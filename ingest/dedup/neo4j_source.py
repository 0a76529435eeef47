"""The Neo4j side of entity resolution: how an `Entity` is stored, and a batch `CandidateSource`.

Lookups (blocking, for recall) map onto the graph like this:
- `by_key`: `(:NameKey {namespace, type, key})<-[:HAS_KEY]-(:Entity)`, one node per exact or
  alias key ("key:acme", "nick:robert cruz"), unique per namespace and type;
- `by_identifier`: `(:Identifier {namespace, kind, value})<-[:IDENTIFIED_BY]-(:Entity)`;
- `fuzzy_candidates`: the `entity_names` fulltext index over `Entity.search_names` (each name's
  words, compact spelling and character trigrams), scoped by the `search_scope` token of the
  namespace+type, queried with the mention's trigrams and re-ranked by the fuzzy stage's ratio;
- `nearest`: `(:EntityName {embedding})-[:NAME_OF]->(:Entity)`, one vector per embedded name,
  through the `entity_embedding` vector index (or an exact scan while a namespace is small).

Round trips are per batch, not per mention: `prefetch` answers every lookup the batch's mentions
can make in a few UNWIND queries, then `BatchSource` serves the sequential resolver from those
answers overlaid with the entities the batch itself saved (Neo4j's fulltext and vector indexes
do not see a transaction's own writes; the overlay does). Stream semantics are kept: mention i
sees everything committed before the batch plus mentions 0..i-1.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz, process

from kg.core.settings.dedup import DedupSettings
from kg.core.settings.memory import VectorSearchSettings
from kg.core.store.store import Tx

from .candidates import InMemoryCandidateSource
from .model import AttributeChange, Entity
from .names import compact_name, is_low_information, normalize_name
from .profile import Profile

MAX_GRAMS = 64  # Lucene caps boolean clauses; a long name's first grams are plenty
FUZZY_OVERFETCH = 2  # fulltext hits fetched per candidate kept after re-ranking by the fuzzy ratio
# Spellings less similar than this are no candidates: far below the fuzzy stage's bands (0.78+)
# and below what a nickname with a misspelled family name scores ("peggy jonse" / "margaret jones").
FUZZY_MIN_RATIO = 0.5
_TOKEN = re.compile(r"[^\W_]+")


# -- storage format ------------------------------------------------------------------------
def scope_token(namespace: str, entity_type: str) -> str:
    """One fulltext token per namespace+type: `+search_scope:<token>` filters inside Lucene."""
    return "s" + hashlib.sha1(f"{namespace}\x1f{entity_type}".encode()).hexdigest()[:20]


def grams(text: str) -> list[str]:
    compact = "".join(_TOKEN.findall(text.casefold()))
    if len(compact) <= 3:
        return [compact] if compact else []
    return list(dict.fromkeys(compact[i : i + 3] for i in range(len(compact) - 2)))[:MAX_GRAMS]


@lru_cache(maxsize=1 << 16)
def _spelling(name: str, entity_type: str) -> str | None:
    return None if is_low_information(name, entity_type) else compact_name(name, entity_type)


def spellings(entity: Entity) -> list[str]:
    """What the fuzzy stage compares for an entity: compact forms of its informative names."""
    return list(dict.fromkeys(s for n in entity.names if (s := _spelling(n, entity.type)) is not None))


def search_names(entity: Entity) -> str:
    tokens: list[str] = []
    for name in entity.names:
        if is_low_information(name, entity.type):
            continue
        compact = compact_name(name, entity.type)
        tokens += normalize_name(name).split() + [compact.replace(" ", "")] + grams(compact)
    return " ".join(dict.fromkeys(t for t in tokens if _TOKEN.fullmatch(t)))


def fuzzy_query(namespace: str, prof: Profile) -> str | None:
    terms = [t for t in grams(compact_name(prof.name, prof.type)) if _TOKEN.fullmatch(t)]
    if not terms:
        return None
    return f"+search_scope:{scope_token(namespace, prof.type)} +({' '.join(terms)})"


def _pairs(values: Mapping[str, frozenset[str]]) -> list[str]:
    return sorted(f"{kind}:{v}" for kind, vs in values.items() for v in vs)


def _unpairs(items: Iterable[str] | None) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for item in items or ():
        kind, _, value = item.partition(":")
        out.setdefault(kind, set()).add(value)
    return {k: frozenset(v) for k, v in out.items()}


def to_props(entity: Entity, namespace: str) -> dict[str, Any]:
    """The resolver's part of an `(:Entity)` node; `keys` marks it as registered with the resolver."""
    return {
        "namespace": namespace, "type": entity.type, "name": entity.name,
        "aliases": list(entity.aliases), "names": list(entity.names), "keys": sorted(entity.keys),
        "identifiers": _pairs(entity.identifiers), "qualifiers": _pairs(entity.qualifiers),
        "attributes": json.dumps(entity.attributes, ensure_ascii=False, sort_keys=True),
        "attribute_history": json.dumps([[c.key, c.old, c.new] for c in entity.history], ensure_ascii=False),
        "mentions": entity.mentions,
        "search_names": search_names(entity), "search_scope": scope_token(namespace, entity.type),
    }


def from_props(props: Mapping[str, Any]) -> Entity:
    return Entity(
        id=props["id"], type=props["type"], name=props["name"],
        aliases=tuple(props.get("aliases") or ()), names=tuple(props.get("names") or ()),
        keys=frozenset(props.get("keys") or ()),
        identifiers=_unpairs(props.get("identifiers")), qualifiers=_unpairs(props.get("qualifiers")),
        attributes=json.loads(props.get("attributes") or "{}"),
        history=tuple(AttributeChange(*c) for c in json.loads(props.get("attribute_history") or "[]")),
        mentions=props.get("mentions") or 0,
    )


# -- prefetch --------------------------------------------------------------------------------
@dataclass
class Prefetch:
    """What Neo4j answered for one batch, before any of its mentions was resolved."""

    entities: dict[str, Entity] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)  # id -> `version` as read (optimistic check)
    keys: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (type, key) -> entity ids
    identifiers: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (kind, value) -> ids
    fuzzy: dict[int, list[str]] = field(default_factory=dict)  # mention index -> ids
    nearest: dict[int, dict[str, float]] = field(default_factory=dict)  # mention index -> id -> cosine


async def lock_keys(tx: Tx, namespace: str, profiles: Sequence[Profile]) -> None:
    """Create-or-lock the exact keys and identifiers of the batch, in one global order.

    A second resolver of the same new name queues here until the first commits, and then finds
    its entity: two entities are never created for one new name. (Alias keys are merged later
    without a lock: two spellings of one new name arriving at once may still make two entities.)
    """
    keys = sorted({(p.type, "key:" + p.key) for p in profiles if p.key})
    idents = sorted({(k, v) for p in profiles for k, v in p.identifiers.items()})
    await tx.run("entities/keys_lock", namespace=namespace,
                 identifiers=[{"kind": k, "value": v} for k, v in idents],
                 keys=[{"type": t, "key": k} for t, k in keys])


Run = Callable[..., Awaitable[list[dict[str, Any]]]]


async def prefetch(
    tx: Tx, namespace: str, profiles: Sequence[Profile], vectors: Sequence[Sequence[float] | None],
    settings: DedupSettings, reader: Run | None = None, policy: VectorSearchSettings | None = None,
) -> Prefetch:
    """Every lookup of the batch. Key and identifier lookups run in `tx` (they see its writes); the
    fulltext and vector searches read committed index state only, so given a `reader` (e.g.
    `Store.read`, another session) they run alongside, not after."""
    found = Prefetch()
    policy = policy or VectorSearchSettings()
    keys = sorted({(p.type, k) for p in profiles for k in p.lookup_keys})
    idents = sorted({(k, v) for p in profiles for k, v in p.identifiers.items()})
    by_key = tx.run("entities/lookup_keys", namespace=namespace,
                    keys=[{"type": t, "key": k} for t, k in keys],
                    identifiers=[{"kind": k, "value": v} for k, v in idents])
    if reader is None:
        rows = await by_key
        await _fuzzy(tx.run, namespace, profiles, settings, found)
        await _nearest(tx.run, namespace, profiles, vectors, settings, found, policy)
    else:
        rows, _, _ = await asyncio.gather(by_key, _fuzzy(reader, namespace, profiles, settings, found),
                                          _nearest(reader, namespace, profiles, vectors, settings, found, policy))
    for row in rows:
        target = found.keys if row["by"] == "key" else found.identifiers
        target[(row["a"], row["b"])] = row["ids"]
    await _hydrate(tx, found)
    return found


async def nearest(tx: Tx, run: Run, namespace: str, profiles: Sequence[Profile],
                  vectors: Sequence[Sequence[float] | None], settings: DedupSettings, found: Prefetch,
                  policy: VectorSearchSettings | None = None) -> None:
    """Meaning neighbours of more mentions, after `prefetch` (for vectors computed later)."""
    await _nearest(run, namespace, profiles, vectors, settings, found, policy or VectorSearchSettings())
    await _hydrate(tx, found)


async def _hydrate(tx: Tx, found: Prefetch) -> None:
    """Read the entities found that are not read yet."""
    ids: set[str] = set()
    for group in (found.keys.values(), found.identifiers.values(), found.fuzzy.values()):
        for id_list in group:
            ids.update(id_list)
    for hits in found.nearest.values():
        ids.update(hits)
    ids -= set(found.entities)
    if ids:
        for row in await tx.run("entities/hydrate", ids=sorted(ids)):
            found.entities[row["entity"]["id"]] = from_props(row["entity"])
            found.versions[row["entity"]["id"]] = row["entity"].get("version") or 0


async def _fuzzy(run: Run, namespace: str, profiles: Sequence[Profile], settings: DedupSettings,
                 found: Prefetch) -> None:
    if not settings.fuzzy.enabled:
        return
    by_query: dict[str, list[int]] = {}  # repeats of a spelling in the batch share one search
    for i, p in enumerate(profiles):
        if not p.low_information and (q := fuzzy_query(namespace, p)):
            by_query.setdefault(q, []).append(i)
    if not by_query:
        return
    fetch = max(settings.fuzzy.limit * FUZZY_OVERFETCH, 20)
    probes = [{"i": same[0], "query": q} for q, same in by_query.items()]
    for row in await run("entities/fuzzy_candidates", probes=probes, fetch=fetch):
        for i in by_query[fuzzy_query(namespace, profiles[row["i"]]) or ""]:
            prof = profiles[i]
            found.fuzzy[i] = best_spelled(prof.name, prof.type, row["hits"], settings.fuzzy.limit)


def best_spelled(name: str, entity_type: str, hits: Sequence[Mapping[str, Any]], limit: int) -> list[str]:
    """The ids among fulltext hits (`{id, names}`) whose spellings rank in the top `limit` by the
    fuzzy stage's ratio: only those are hydrated (the batch overlay re-ranks with its own)."""
    by_spelling: dict[str, set[str]] = {}
    for hit in hits:
        for n in hit["names"] or ():
            if (spelling := _spelling(n, entity_type)) is not None:
                by_spelling.setdefault(spelling, set()).add(hit["id"])
    return _top(compact_name(name, entity_type), [by_spelling], limit)


def _top(query: str, indexes: Sequence[Mapping[str, set[str]]], limit: int) -> list[str]:
    """Ids of the `limit` spellings closest to `query` over several spelling -> ids indexes."""
    scores: dict[str, float] = {}
    for index in indexes:
        for spelling, score, _ in process.extract(query, list(index), scorer=fuzz.ratio, limit=limit,
                                                  score_cutoff=FUZZY_MIN_RATIO * 100):
            scores[spelling] = max(score, scores.get(spelling, 0.0))
    chosen: list[str] = []
    for spelling, _ in sorted(scores.items(), key=lambda p: -p[1])[:limit]:
        ids = set().union(*(index.get(spelling, ()) for index in indexes))
        chosen.extend(i for i in sorted(ids) if i not in chosen)
    return chosen[:limit]


async def _nearest(run: Run, namespace: str, profiles: Sequence[Profile], vectors: Sequence[Sequence[float] | None],
                   settings: DedupSettings, found: Prefetch, policy: VectorSearchSettings) -> None:
    by_vector: dict[tuple[str, tuple[float, ...]], list[int]] = {}  # repeats share one search
    for i, v in enumerate(vectors):
        if v is not None:
            by_vector.setdefault((profiles[i].type, tuple(v)), []).append(i)
    if not by_vector:
        return
    probes: list[dict[str, Any]] = [{"i": same[0], "type": t, "vector": list(v)} for (t, v), same in by_vector.items()]
    k = settings.embedding.k
    counts = await run("entities/names_count", namespace=namespace)
    sizes = {r["type"]: r["count"] for r in counts}
    total = counts[0]["total"] if counts else 0
    exact = [p for p in probes if 0 < sizes.get(p["type"], 0) and policy.exact("entities", sizes[p["type"]])]
    indexed = [p for p in probes if sizes.get(p["type"], 0) and not policy.exact("entities", sizes[p["type"]])]
    rows: list[dict[str, Any]] = []
    if exact:
        rows += await run("entities/nearest_exact", namespace=namespace, probes=exact, k=k)
    for entity_type in sorted({p["type"] for p in indexed}):
        # The index spans all namespaces and types: fetch enough that k of this one are likely in.
        fetch = policy.index_fetch("entities", k, diluted=-(-2 * k * total // sizes[entity_type]))
        rows += await run("entities/nearest_index", namespace=namespace, k=k, fetch=fetch,
                          probes=[p for p in indexed if p["type"] == entity_type])
    hits = {row["i"]: {h["id"]: 2.0 * h["score"] - 1.0 for h in row["hits"]} for row in rows}
    for same in by_vector.values():  # Neo4j scores cosine as (1 + cos) / 2; the stages use cos
        if same[0] in hits:
            for i in same:
                found.nearest[i] = hits[same[0]]


# -- the batch source --------------------------------------------------------------------------
class BatchSource:
    """A `CandidateSource` for one batch: prefetched answers, overlaid with the batch's own saves.

    The resolver asks about mention `at` (set before each `resolve`); entities it saves go to the
    overlay, which later lookups consult too, and whose current state replaces the prefetched one.
    """

    def __init__(self, found: Prefetch) -> None:
        self.found = found
        self.overlay = InMemoryCandidateSource()
        self.at = 0

    @property
    def saved(self) -> dict[str, Entity]:
        return self.overlay.entities

    def _current(self, ids: Iterable[str], extra: Iterable[Entity] = ()) -> list[Entity]:
        out: dict[str, Entity] = {}
        for entity_id in ids:
            entity = self.overlay.entities.get(entity_id) or self.found.entities.get(entity_id)
            if entity is not None:
                out.setdefault(entity_id, entity)
        for entity in extra:
            out.setdefault(entity.id, entity)
        return list(out.values())

    def by_key(self, entity_type: str, key: str) -> list[Entity]:
        return self._current(self.found.keys.get((entity_type, key), ()), self.overlay.by_key(entity_type, key))

    def by_identifier(self, kind: str, value: str) -> list[Entity]:
        return self._current(self.found.identifiers.get((kind, value), ()), self.overlay.by_identifier(kind, value))

    def fuzzy_candidates(self, entity_type: str, name: str, limit: int) -> list[Entity]:
        mine = self.overlay._spellings.get(entity_type, {})  # this batch's entities, current versions
        prefetched: dict[str, set[str]] = {}
        for e in self._current(self.found.fuzzy.get(self.at, ())):
            if e.type == entity_type and e.id not in self.overlay.entities:
                for spelling in spellings(e):
                    prefetched.setdefault(spelling, set()).add(e.id)
        return self._current(_top(compact_name(name, entity_type), [prefetched, mine], limit))

    def nearest(self, entity_type: str, vector: Sequence[float], k: int) -> list[tuple[Entity, float]]:
        scores = dict(self.found.nearest.get(self.at, {}))
        for entity, score in self.overlay.nearest(entity_type, vector, k):
            scores[entity.id] = max(score, scores.get(entity.id, -1.0))
        best = sorted(scores.items(), key=lambda p: -p[1])[:k]
        current = {e.id: e for e in self._current(i for i, _ in best)}
        return [(current[i], s) for i, s in best if i in current and current[i].type == entity_type]

    def save(self, entity: Entity) -> None:
        self.overlay.save(entity)
