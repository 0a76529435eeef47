"""One session's extraction into the graph, in ONE transaction: nothing is half-written.

In order, inside the transaction: lock the session; resolve the extracted entities through the
Neo4j resolver (it sees this transaction's writes through its batch overlay); link every evidence
turn `(Turn)-[:MENTIONS]->(Entity)`; write facts through the fact writer (subjects and objects
named by their resolved entity's key), relationships as `RELATES_TO`, corrections through the
correction writer, decisions; stamp the session. Everything carries the extractor, model and
prompt version.

Re-indexing duplicates nothing: a surface form this session already resolved keeps its entity
(the resolver is not asked again: a bare "Dana" would otherwise stay ambiguous against itself),
fact events, relationships and decisions have ids derived from the session (or the namespace)
and the item, links are merged, and a correction repeated by its own session is a no-op.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ingest.corrections.writer import CorrectionWriter
from ingest.dedup.model import Mention
from ingest.dedup.neo4j_resolver import GraphResolver, with_retries
from ingest.extraction.chunking import fact_key, normalize
from ingest.extraction.models import ChunkTurn, ExtractedEntity, ExtractionResult
from ingest.facts import FactWriter
from kg.facts_models import entity_id, entity_key
from kg.store import Store, Tx

CONTEXT_CHARS = 300  # of the first evidence turn, as the mention's context


@dataclass(frozen=True)
class Provenance:
    """Who extracted: stored on the session and on everything written from its extraction."""

    extractor: str  # backend: "offline" or a service name
    model: str
    prompt_version: str
    extracted_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def version(self) -> str:
        """What `index_pending` compares: a session made by another one is stale."""
        return f"{self.extractor}:{self.model}:{self.prompt_version}"

    def stamp(self) -> dict[str, Any]:
        return {"extractor": self.extractor, "model": self.model, "prompt_version": self.prompt_version,
                "extracted_at": self.extracted_at}


@dataclass
class Written:
    entities_created: int = 0
    entities_merged: int = 0
    entities_reused: int = 0
    mentions: int = 0
    facts: int = 0
    relationships: int = 0
    corrections: int = 0
    decisions: int = 0


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:24]


class SessionGraphWriter:
    def __init__(self, store: Store, resolver: GraphResolver, facts: FactWriter, corrections: CorrectionWriter) -> None:
        self.store = store
        self.resolver = resolver
        self.facts = facts
        self.corrections = corrections

    async def write(
        self, namespace: str, session_id: str, turns: Mapping[str, ChunkTurn], result: ExtractionResult,
        provenance: Provenance,
    ) -> Written:
        entities = result.entities
        mentions = [_mention(e, turns) for e in entities]

        async def work(tx: Tx) -> Written:
            return await self._write(tx, namespace, session_id, turns, result, provenance, mentions)

        return await with_retries(self.store, work)

    async def _write(
        self, tx: Tx, namespace: str, session_id: str, turns: Mapping[str, ChunkTurn], result: ExtractionResult,
        provenance: Provenance, mentions: list[Mention],
    ) -> Written:
        done = Written()
        stamp = provenance.stamp()
        [session] = await tx.run("queries/session_index_lock", namespace=namespace, session_id=session_id) or [None]
        if session is None:
            raise KeyError(f"no session {session_id!r} in namespace {namespace!r}")
        known = {(k["surface_key"], k["type"]): k["id"] for k in session["known"]}
        entity_of: dict[int, str] = {}
        todo = [i for i, e in enumerate(result.entities) if (normalize(e.name), e.type) not in known]
        for i, e in enumerate(result.entities):
            if i not in todo:
                entity_of[i] = known[(normalize(e.name), e.type)]
                done.entities_reused += 1
        resolutions = await self.resolver.resolve_in(
            tx, namespace, [mentions[i] for i in todo], stamp=stamp,
            aliases={j: result.entities[i].aliases for j, i in enumerate(todo) if result.entities[i].aliases},
            reader=self.store)
        for i, r in zip(todo, resolutions):
            entity_of[i] = r.entity_id
            done.entities_created += r.created
            done.entities_merged += not r.created
        brief = {r["id"]: r for r in await tx.run("queries/entities_brief", ids=sorted(set(entity_of.values())))}
        names = _names(result.entities, entity_of, brief)

        rows = [{"turn_id": t, "entity_id": entity_of[i], "surface": e.name, "surface_key": normalize(e.name),
                 "type": e.type} for i, e in enumerate(result.entities) for t in e.evidence_turn_ids if t in turns]
        if rows:
            [linked] = await tx.run("queries/mentions_write", namespace=namespace, session_id=session_id,
                                    rows=rows, stamp=stamp)
            done.mentions = linked["linked"]
        done.facts = await self._facts(tx, namespace, session_id, turns, result, provenance, names)
        done.relationships = await self._relationships(tx, namespace, session_id, turns, result, stamp, names)
        for c in result.corrections:
            seen = max((turns[t].ts for t in c.evidence_turn_ids if t in turns and turns[t].ts), default=None)
            added = await self.corrections.add(
                namespace, session_id, c.rule_text, c.original_behavior, c.corrected_behavior, c.correction_type,
                seen_at=seen, evidence_turn_ids=[t for t in c.evidence_turn_ids if t in turns], tx=tx,
                provenance={k: v for k, v in stamp.items()})
            done.corrections += added.decision != "noop"
        decisions = [{"id": "dec_" + _digest(namespace, session_id, normalize(d.text)), "text": d.text,
                      "evidence": [t for t in d.evidence_turn_ids if t in turns]} for d in result.decisions]
        if decisions:
            [wrote] = await tx.run("queries/decisions_write", namespace=namespace, session_id=session_id,
                                   rows=decisions, stamp=stamp, now=provenance.extracted_at)
            done.decisions = wrote["created"]
        await tx.run("queries/session_indexed", namespace=namespace, session_id=session_id, stamp=stamp,
                     now=provenance.extracted_at, version=provenance.version, message_count=session["message_count"])
        return done

    async def _facts(
        self, tx: Tx, namespace: str, session_id: str, turns: Mapping[str, ChunkTurn], result: ExtractionResult,
        provenance: Provenance, names: Mapping[str, Mapping[str, Any]],
    ) -> int:
        changed = 0
        for f in result.facts:
            subject, obj = names.get(normalize(f.subject)), names.get(normalize(f.object))
            evidence = [t for t in f.evidence_turn_ids if t in turns]
            valid_from = f.valid_from or min((turns[t].ts for t in evidence if turns[t].ts), default=None)
            written = await self.facts.remember(
                namespace, subject["key"] if subject else f.subject, f.predicate, f.object,
                valid_from=valid_from, source=f.source, op="retract" if f.retracts else "assert",
                evidence_turn_ids=evidence, extractor=f"{provenance.extractor}:{provenance.model}",
                prompt_version=provenance.prompt_version, subject_type=subject["type"] if subject else "other",
                object_type=obj["type"] if obj else None, object_key=obj["key"] if obj else None, tx=tx,
                event_id="fev_" + _digest(namespace, session_id, *fact_key(f)))
            changed += written.decision != "noop"
        return changed

    async def _relationships(
        self, tx: Tx, namespace: str, session_id: str, turns: Mapping[str, ChunkTurn], result: ExtractionResult,
        stamp: Mapping[str, Any], names: Mapping[str, Mapping[str, Any]],
    ) -> int:
        rows = []
        for r in result.relationships:
            ends = [names.get(normalize(n)) or _named(namespace, n) for n in (r.from_, r.to)]
            evidence = [t for t in r.evidence_turn_ids if t in turns]
            rows.append({
                "id": "rel_" + _digest(namespace, ends[0]["id"], r.relation, ends[1]["id"]), "relation": r.relation,
                "from": ends[0], "to": ends[1], "evidence": evidence,
                "valid_from": min((turns[t].ts for t in evidence if turns[t].ts), default=stamp["extracted_at"]),
            })
        if not rows:
            return 0
        [wrote] = await tx.run("queries/relationships_write", namespace=namespace, session_id=session_id, rows=rows,
                               stamp=stamp, now=stamp["extracted_at"])
        return wrote["created"]


def _mention(entity: ExtractedEntity, turns: Mapping[str, ChunkTurn]) -> Mention:
    evidence = [turns[t] for t in entity.evidence_turn_ids if t in turns]
    context = evidence[0].text[:CONTEXT_CHARS] if evidence else ""
    attributes = dict(entity.attributes)
    # A person who is the speaker of their own evidence turns is that speaker: the label the caller
    # gave the turns identifies them across sessions (a bare "Dana" alone would stay ambiguous).
    spoken = {t.speaker for t in evidence if t.speaker and t.role == "user"}
    if entity.type == "person" and any(normalize(s) == normalize(entity.name) for s in spoken):
        attributes.setdefault("speaker", entity.name)
    return Mention(entity.name, entity.type, attributes, context)


def _names(entities: Sequence[ExtractedEntity], entity_of: Mapping[int, str],
           brief: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Normalized name or alias -> the resolved entity (id, key, type, name), first entity wins."""
    names: dict[str, Mapping[str, Any]] = {}
    for i, e in enumerate(entities):
        for n in (e.name, *e.aliases):
            names.setdefault(normalize(n), brief[entity_of[i]])
    return names


def _named(namespace: str, name: str) -> dict[str, Any]:
    """An end that extraction did not list as an entity: the node a fact about that name would use."""
    key = entity_key(name)
    return {"id": entity_id(namespace, key), "key": key, "name": " ".join(name.split()), "type": "other"}
