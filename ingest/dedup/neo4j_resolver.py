"""The stream resolver on Neo4j: a batch of mentions per transaction, or inside the caller's.

One batch: lock the batch's exact keys and identifiers, prefetch every candidate in a few
queries (`neo4j_source.prefetch`), resolve the mentions in order in memory with the pure
`Resolver` over a `BatchSource`, give new entities their ids, write what changed. Name vectors
are only computed (and their neighbours searched) for the mentions that identifiers and names
leave open, found by a first in-memory pass without the embedding stage; if the real pass then
needs another one, the rest are fetched and the pass is redone. (`vectors` embeds a batch up
front instead, outside any transaction.)

Ids of new entities follow the fact writer's scheme (`kg.core.models.facts.entity_id` of the entity
key of the first surface form), so a fact about "Dana" and the entity resolved from "Dana" are
one node; an entity the fact writer made from a bare subject name is adopted by the resolver. A
second entity of the same name (told apart by an identifier, a qualifier or its type) gets the
key "dana#person", "dana#person2", ...

Concurrency: exact keys and identifiers are locked first (one new name, one entity); an update of
an existing entity is checked against the version it was read at; a conflict (a constraint hit
by a concurrent creation, or a stale entity) re-runs the whole batch (`resolve`), or, inside a
caller's transaction, surfaces as `ResolutionConflict` for the caller's retry (`with_retries`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, TypeVar

from neo4j.exceptions import ConstraintError

from kg.core.embedders.base import embed_async
from kg.core.models.facts import entity_id, entity_key
from kg.core.settings.dedup import DedupSettings
from kg.core.settings.memory import VectorSearchSettings
from kg.core.store.store import Store, Tx

from .entity import absorb
from .model import Entity, Mention, Resolution
from .neo4j_source import BatchSource, Prefetch, lock_keys, nearest, prefetch, to_props
from .profile import Profile, profile
from .resolver import Adjudicate, Resolver, TextEmbedder, embedding_text

log = logging.getLogger(__name__)
T = TypeVar("T")
ATTEMPTS = 8
_SUFFIXES = 6  # "key#type", "key#type2", ... tried before a hashed suffix


class ResolutionConflict(RuntimeError):
    """A concurrent resolver changed an entity this batch read; the batch must be re-resolved."""


async def with_retries(store: Store, work: Callable[[Tx], Awaitable[T]], attempts: int = ATTEMPTS) -> T:
    """`store.transaction(work)`, re-run when a concurrent resolver won a race (deadlocks and other
    transient errors are already retried by the driver)."""
    for attempt in range(1, attempts + 1):
        try:
            return await store.transaction(work)
        except (ConstraintError, ResolutionConflict) as exc:
            if attempt == attempts:
                raise
            log.info("entity resolution conflict (%s); retrying, attempt %d", type(exc).__name__, attempt + 1)
            await asyncio.sleep(random.uniform(0.005, 0.02) * attempt)  # let the winner commit
    raise AssertionError("unreachable")


class _MissingVector(Exception):
    """The embedding stage wants a mention whose vector and neighbours were not fetched."""

    def __init__(self, at: int) -> None:
        self.at = at


class _Given:
    """The resolver's embedder inside a batch: the vectors fetched for it, by mention index."""

    def __init__(self, vectors: Mapping[int, Sequence[float]], source: BatchSource) -> None:
        self.vectors = vectors
        self.source = source
        self.used: set[int] = set()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        at = self.source.at
        if at not in self.vectors:
            raise _MissingVector(at)
        self.used.add(at)
        return [list(self.vectors[at])]


class GraphResolver:
    """Resolves mentions against a namespace's entities in Neo4j; see the module docstring."""

    def __init__(
        self,
        settings: DedupSettings | None = None,
        embedder: TextEmbedder | None = None,
        adjudicate: Adjudicate | None = None,
        embedding_model: str | None = None,
        vector_search: VectorSearchSettings | None = None,
    ) -> None:
        self.settings = settings or DedupSettings()
        self.vector_search = vector_search or VectorSearchSettings()
        self.embedder = embedder if self.settings.embedding.enabled else None
        self.adjudicate = adjudicate
        self.embedding_model = embedding_model or getattr(embedder, "name", None)

    def needs_vector(self, prof: Profile) -> bool:
        stage = self.settings.embedding
        return self.embedder is not None and prof.type in stage.types and not prof.low_information

    def vectors(self, mentions: Sequence[Mention]) -> list[list[float] | None]:
        """The name vectors the embedding stage may need, one call for the batch (CPU: run it in a
        worker thread, before the transaction)."""
        texts: list[str | None] = []
        for m in mentions:
            prof = profile(m, self.settings)
            texts.append(embedding_text(m, self.settings.embedding.include_context) if self.needs_vector(prof) else None)
        unique = list(dict.fromkeys(t for t in texts if t is not None))
        if not unique or self.embedder is None:
            return [None] * len(mentions)
        by_text = dict(zip(unique, self.embedder.embed(unique)))
        return [by_text[t] if t is not None else None for t in texts]

    async def resolve(
        self, store: Store, namespace: str, mentions: Sequence[Mention],
        vectors: Sequence[Sequence[float] | None] | None = None,
    ) -> list[Resolution]:
        """One batch in its own transaction (re-run on a conflict)."""
        return await with_retries(store, lambda tx: self.resolve_in(tx, namespace, mentions, vectors, reader=store))

    async def resolve_in(
        self,
        tx: Tx,
        namespace: str,
        mentions: Sequence[Mention],
        vectors: Sequence[Sequence[float] | None] | None = None,
        stamp: Mapping[str, Any] | None = None,
        aliases: Mapping[int, Sequence[str]] | None = None,
        reader: Store | None = None,
    ) -> list[Resolution]:
        """Resolve and write `mentions` in the caller's transaction; `stamp` (e.g. the extractor and
        prompt version) is set on every entity written; `aliases[i]` are other names the source says
        mention i goes by, absorbed into whatever entity mention i resolves to. Raises
        `ResolutionConflict` (or a `ConstraintError`) when a concurrent resolver got in the way:
        retry the transaction. `reader`: run the index searches on it, alongside the transaction's own
        lookups. `vectors` (from `vectors`): embed up front; None: embed only the mentions that
        names and identifiers leave open (a first pass without the embedding stage finds them)."""
        if not mentions:
            return []
        profiles = [profile(m, self.settings) for m in mentions]
        run = reader.read if reader else tx.run
        await lock_keys(tx, namespace, profiles)
        given = {i: v for i, v in enumerate(vectors or ()) if v is not None}
        found = await prefetch(tx, namespace, profiles, [given.get(i) for i in range(len(mentions))], self.settings,
                               reader.read if reader else None, self.vector_search)
        if vectors is None and self.embedder is not None:
            await self._fetch_vectors(tx, run, namespace, mentions, profiles, found, given,
                                      self._open_by_names(found, mentions, aliases))
        while True:
            try:
                source, used, resolutions = await self._pass(found, mentions, given, aliases)
                break
            except _MissingVector as missing:  # the first pass's guess missed one: fetch the rest, redo
                rest = {i for i in range(missing.at, len(mentions)) if self.needs_vector(profiles[i])} - set(given)
                await self._fetch_vectors(tx, run, namespace, mentions, profiles, found, given, rest)
        final = await self._final_ids(tx, namespace, source)
        names = [{"entity": r.entity_id, "text": embedding_text(mentions[i], self.settings.embedding.include_context),
                  "vector": given[i]} for i, r in enumerate(resolutions) if i in used]
        await self._write(tx, namespace, source, found, final, names, stamp or {})
        return [replace(r, entity_id=final[r.entity_id].id) if r.entity_id in final else r for r in resolutions]

    async def _pass(
        self, found: Prefetch, mentions: Sequence[Mention], given: Mapping[int, Sequence[float]],
        aliases: Mapping[int, Sequence[str]] | None, embedding: bool = True,
    ) -> tuple[BatchSource, set[int], list[Resolution]]:
        """The stream over the batch, in memory: (the overlay, mentions embedded, resolutions). An
        adjudicator with `settle` gets the batch's ambiguities in one call: a first pass collects
        them (unanswered), the second resolves with the answers (a question the answers changed
        and nobody asked stays ambiguous)."""
        adjudicate = self.adjudicate if embedding else None
        settle = getattr(adjudicate, "settle", None)
        if settle is None:
            if adjudicate is None:
                return self._in_memory(found, mentions, given, aliases, embedding, None)
            # An adjudicator calls an LLM (blocking): then resolve in a worker thread.
            return await asyncio.to_thread(self._in_memory, found, mentions, given, aliases, embedding, adjudicate)
        asked: list[tuple[Profile, list[Entity]]] = []
        self._in_memory(found, mentions, given, aliases, embedding, lambda p, c: asked.append((p, list(c))))
        if not asked:
            return self._in_memory(found, mentions, given, aliases, embedding, None)
        answers = dict(zip((_question(p, c) for p, c in asked), await settle(asked)))
        return self._in_memory(found, mentions, given, aliases, embedding,
                               lambda p, c: answers.get(_question(p, c)))

    def _in_memory(
        self, found: Prefetch, mentions: Sequence[Mention], given: Mapping[int, Sequence[float]],
        aliases: Mapping[int, Sequence[str]] | None, embedding: bool, adjudicate: Adjudicate | None,
    ) -> tuple[BatchSource, set[int], list[Resolution]]:
        source = BatchSource(found)
        vectors = _Given(given, source)
        counter = iter(range(1, 1_000_000))
        resolver = Resolver(source, self.settings, vectors if embedding and self.embedder is not None else None,
                            new_id=lambda: f"new:{next(counter)}", adjudicate=adjudicate)
        resolutions: list[Resolution] = []
        for i, mention in enumerate(mentions):
            source.at = i
            resolutions.append(resolver.resolve(mention))
            for alias in (aliases or {}).get(i, ()):
                alias_profile = profile(Mention(alias, mention.type), self.settings)
                source.save(absorb(source.saved[resolutions[-1].entity_id], alias_profile))
        return source, vectors.used, resolutions

    def _open_by_names(self, found: Prefetch, mentions: Sequence[Mention],
                       aliases: Mapping[int, Sequence[str]] | None) -> set[int]:
        """Mentions the embedding stage may decide: those identifiers and names leave open in a pass
        without it (and of a type it covers)."""
        source = BatchSource(found)
        counter = iter(range(1, 1_000_000))
        resolver = Resolver(source, self.settings, None, new_id=lambda: f"new:{next(counter)}")
        open_: set[int] = set()
        for i, mention in enumerate(mentions):
            source.at = i
            r = resolver.resolve(mention)
            settled = r.decision is not None and r.decision.stage in ("attribute", "exact", "alias")
            if not settled and self.needs_vector(profile(mention, self.settings)):
                open_.add(i)
            for alias in (aliases or {}).get(i, ()):
                source.save(absorb(source.saved[r.entity_id], profile(Mention(alias, mention.type), self.settings)))
        return open_

    async def _fetch_vectors(
        self, tx: Tx, run: Any, namespace: str, mentions: Sequence[Mention], profiles: Sequence[Profile],
        found: Prefetch, given: dict[int, Sequence[float]], wanted: set[int],
    ) -> None:
        """Embed `wanted` mentions (one call; repeats share a text) and fetch their neighbours."""
        wanted = {i for i in wanted if i not in given}
        if not wanted or self.embedder is None:
            return
        texts = {i: embedding_text(mentions[i], self.settings.embedding.include_context) for i in sorted(wanted)}
        unique = list(dict.fromkeys(texts.values()))
        by_text = dict(zip(unique, await embed_async(self.embedder, unique)))
        fresh = {i: by_text[t] for i, t in texts.items()}
        given.update(fresh)
        await nearest(tx, run, namespace, profiles, [fresh.get(i) for i in range(len(mentions))], self.settings, found,
                      self.vector_search)

    async def _final_ids(self, tx: Tx, namespace: str, source: BatchSource) -> dict[str, _NewId]:
        """Ids of the batch's new entities (saved under temporary "new:N" ids while resolving)."""
        new = [e for e in source.saved.values() if e.id.startswith("new:")]
        if not new:
            return {}
        options: dict[str, list[str]] = {}
        for e in new:
            base = entity_key(e.aliases[0] if e.aliases else e.name)
            options[e.id] = [base] + [f"{base}#{e.type}" + (str(n) if n > 1 else "") for n in range(1, _SUFFIXES)]
        proposed = sorted({entity_id(namespace, k) for keys in options.values() for k in keys})
        taken = {r["id"]: r for r in await tx.run("entities/ids_check", ids=proposed)}
        final: dict[str, _NewId] = {}
        used: set[str] = set()
        for e in new:
            choice: _NewId | None = None
            for key in options[e.id]:
                eid = entity_id(namespace, key)
                row = taken.get(eid)
                if eid in used or (row is not None and (row["registered"] or row["type"] not in ("other", e.type))):
                    continue
                choice = _NewId(eid, key, adopt=row is not None)
                break
            if choice is None:  # many namesakes of one type: a suffix from the entity's own evidence
                digest = hashlib.sha1(repr((sorted(e.identifiers.items()), e.aliases)).encode()).hexdigest()[:8]
                key = f"{options[e.id][0]}#{e.type}-{digest}"
                choice = _NewId(entity_id(namespace, key), key, adopt=False)
            used.add(choice.id)
            final[e.id] = choice
        return final

    async def _write(
        self, tx: Tx, namespace: str, source: BatchSource, found: Prefetch, final: dict[str, _NewId],
        names: list[dict[str, Any]], stamp: Mapping[str, Any],
    ) -> None:
        now = datetime.now(timezone.utc)
        rows: list[dict[str, Any]] = []
        claims: list[dict[str, Any]] = []
        for saved_id, entity in source.saved.items():
            new = final.get(saved_id)
            before = found.entities.get(saved_id) if new is None else None
            version = found.versions.get(saved_id, 0)
            if new is None or new.adopt:
                claims.append({"id": new.id if new else saved_id, "version": version})
            new_keys = sorted(entity.keys - (before.keys if before else frozenset()))
            old_ids = before.identifiers if before else {}
            new_identifiers = [{"kind": k, "value": v} for k, vs in sorted(entity.identifiers.items())
                               for v in sorted(vs - old_ids.get(k, frozenset()))]
            rows.append({
                "id": new.id if new else saved_id, "create": new is not None and not new.adopt, "version": version,
                "key": new.key if new else entity_key(entity.name),  # kept when the node has one
                "props": {**to_props(entity, namespace), **stamp},
                "new_keys": new_keys, "new_identifiers": new_identifiers,
            })
        if claims:
            stale = await tx.run("entities/claim", rows=sorted(claims, key=lambda r: r["id"]))
            if stale:
                raise ResolutionConflict(f"entities changed by a concurrent resolver: {[r['id'] for r in stale][:5]}")
        rows.sort(key=lambda r: r["id"])
        await tx.run("entities/write", entities=rows, now=now)
        if names:
            await tx.run("entities/names_write", now=now, model=self.embedding_model, names=[
                {"id": name_id(final[n["entity"]].id if n["entity"] in final else n["entity"], n["text"]),
                 "entity_id": final[n["entity"]].id if n["entity"] in final else n["entity"],
                 "text": n["text"], "embedding": list(n["vector"])} for n in names])


@dataclass(frozen=True)
class _NewId:
    id: str
    key: str  # the facts-compatible key the id derives from
    adopt: bool  # the fact writer already made this node from a subject name


def name_id(entity: str, text: str) -> str:
    return "en_" + hashlib.sha256(f"{entity}\x1f{text}".encode()).hexdigest()[:24]


def _question(mention: Profile, candidates: Sequence[Entity]) -> tuple[str, str, tuple[str, ...]]:
    return mention.mention.name, mention.mention.type, tuple(c.id for c in candidates)
