"""One session's extraction into the graph, in ONE transaction: nothing is half-written.

In order, inside the transaction: lock the session; resolve the extracted entities through the
Neo4j resolver (it sees this transaction's writes through its batch overlay); link every evidence
turn `(Turn)-[:MENTIONS]->(Entity)`; write facts through the fact writer (subjects and objects
named by their resolved entity's key), relationships through the relationship writer (bi-temporal
`RELATES_TO` edges), corrections through the correction writer, decisions; withdraw what an earlier
extractor version read from this session and this one no longer finds (`kg.ingest.reconcile`); stamp
the session. Everything carries the extractor, model and prompt version.

Re-indexing duplicates nothing: a surface form this session already resolved keeps its entity
(the resolver is not asked again: a bare "Dana" would otherwise stay ambiguous against itself),
fact and relationship events and decisions have ids derived from the session (or the namespace)
and the item, links are merged, and a correction repeated by its own session is a no-op.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kg.core.models.facts import RememberResult, entity_id, entity_key
from kg.core.models.relationships import RelateResult
from kg.core.models.requests import CorrectionReport, FactAssertion, RelationshipAssertion
from kg.core.models.values import native
from kg.core.prompts.extraction import ChunkTurn, ExtractedEntity, ExtractionResult
from kg.core.store.store import Store, Tx
from kg.core.vocabulary import Trust

from .corrections.writer import CorrectionWriter
from .dedup.model import Mention
from .dedup.neo4j_resolver import GraphResolver, with_retries
from .dedup.rebuild import rebuild
from .extraction.merging import fact_key, normalize
from .facts import FactWriter
from .reconcile import Asserted, event_ids, reason, stale
from .relationships import RelationshipWriter
from .temporal import Origin

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

    def origin(self, session_id: str, statement: str | None = None, **withdrawal: str) -> Origin:
        """What the writers record of an event this extraction wrote (or, with `withdrawal`, took back)."""
        return Origin(f"{self.extractor}:{self.model}", self.prompt_version, session_id, statement, **withdrawal)

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
    withdrawn: int = 0


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:24]


class SessionGraphWriter:
    def __init__(self, store: Store, resolver: GraphResolver, facts: FactWriter, corrections: CorrectionWriter,
                 relationships: RelationshipWriter) -> None:
        self.store = store
        self.resolver = resolver
        self.facts = facts
        self.corrections = corrections
        self.relationships = relationships

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
        rows = await tx.run("sessions/index_lock", namespace=namespace, session_id=session_id)
        session = rows[0] if rows else None
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
        brief = {r["id"]: r for r in await tx.run("entities/brief", ids=sorted(set(entity_of.values())))}
        names = _names(result.entities, entity_of, brief)
        held = await _hold_merges(tx, namespace, session_id, result.entities, turns, todo, resolutions, brief)

        # what the mention taught its entity rides on the link, so an erase can rebuild the entity
        # from the mentions that remain (kg.ingest.dedup.rebuild)
        rows = [{"turn_id": t, "entity_id": entity_of[i], "surface": e.name, "surface_key": normalize(e.name),
                 "type": e.type, "aliases": list(e.aliases), "held": held.get(i),
                 "attributes": json.dumps(mentions[i].attributes, ensure_ascii=False, sort_keys=True)}
                for i, e in enumerate(result.entities) for t in e.evidence_turn_ids if t in turns]
        if rows:
            [linked] = await tx.run("entities/mentions_write", namespace=namespace, session_id=session_id,
                                    rows=rows, stamp=stamp)
            done.mentions = linked["linked"]
        if held:  # what the untrusted mentions taught trusted entities is taken back until confirmed
            await rebuild(tx, namespace, {entity_of[i] for i in held}, self.resolver.settings)
        prior = [Asserted.from_row(r) for r in await tx.run(
            "sessions/statements", namespace=namespace, session_id=session_id)]
        statements = _statements(namespace, session_id, result, names)
        ids = event_ids(statements.values(), prior)
        done.facts, done.relationships = await self._write_statements(
            tx, namespace, session_id, turns, result, provenance, names, statements, ids)
        if session["previous_version"] not in (None, provenance.version):
            done.withdrawn = await self._withdraw(tx, namespace, session_id, stale(prior, statements.values()),
                                                  provenance)
        for c in result.corrections:
            seen = max((ts for t in c.evidence_turn_ids if t in turns and (ts := turns[t].ts)), default=None)
            # model_construct: the extraction models validated these already; the writer's checks still run
            correction = CorrectionReport.model_construct(
                session_id=session_id, rule_text=c.rule_text, original_behavior=c.original_behavior,
                corrected_behavior=c.corrected_behavior, correction_type=c.correction_type, seen_at=seen,
                evidence_turn_ids=[t for t in c.evidence_turn_ids if t in turns],
                trust=trust_of(c.evidence_turn_ids, turns))
            added = await self.corrections.add(namespace, correction, tx=tx, provenance=dict(stamp))
            done.corrections += added.decision != "noop"
        decisions = [{"id": "dec_" + _digest(namespace, session_id, normalize(d.text)), "text": d.text,
                      "evidence": [t for t in d.evidence_turn_ids if t in turns]} for d in result.decisions]
        if decisions:
            [wrote] = await tx.run("sessions/decisions_write", namespace=namespace, session_id=session_id,
                                   rows=decisions, stamp=stamp, now=provenance.extracted_at)
            done.decisions = wrote["created"]
        await tx.run("sessions/indexed", namespace=namespace, session_id=session_id, stamp=stamp,
                     now=provenance.extracted_at, version=provenance.version, message_count=session["message_count"])
        return done

    async def _write_statements(
        self, tx: Tx, namespace: str, session_id: str, turns: Mapping[str, ChunkTurn], result: ExtractionResult,
        provenance: Provenance, names: Mapping[str, Mapping[str, Any]], statements: Mapping[tuple, str],
        ids: Mapping[str, str],
    ) -> tuple[int, int]:
        """The extracted facts and relationships; how many of each changed the graph."""
        facts = relationships = 0
        for f in result.facts:
            statement = statements[("fact", *fact_key(f))]
            subject, obj = names.get(normalize(f.subject)), names.get(normalize(f.object))
            evidence = [t for t in f.evidence_turn_ids if t in turns]
            valid_from = f.valid_from or min((ts for t in evidence if (ts := turns[t].ts)), default=None)
            fact = FactAssertion.model_construct(
                subject=subject["key"] if subject else f.subject, predicate=f.predicate, object=f.object,
                valid_from=valid_from, source=f.source, op="retract" if f.retracts else "assert",
                evidence_turn_ids=evidence, subject_type=subject["type"] if subject else "other",
                object_type=obj["type"] if obj else None, trust=trust_of(evidence, turns))
            written = await self.facts.remember(namespace, fact, provenance.origin(session_id, statement,
                                                                                   event_id=ids[statement]),
                                                object_key=obj["key"] if obj else None, tx=tx)
            facts += written.decision != "noop"
        for r in result.relationships:
            ends = _ends(namespace, r, names)
            statement = statements[("relationship", ends[0]["id"], r.relation, ends[1]["id"], r.retracts)]
            evidence = [t for t in r.evidence_turn_ids if t in turns]
            relation = RelationshipAssertion.model_construct(
                subject=ends[0]["name"], type=r.relation, object=ends[1]["name"],
                valid_from=min((ts for t in evidence if (ts := turns[t].ts)), default=provenance.extracted_at),
                op="retract" if r.retracts else "assert", evidence_turn_ids=evidence, trust=trust_of(evidence, turns))
            done = await self.relationships.relate(namespace, relation, (ends[0], ends[1]),
                                                   provenance.origin(session_id, statement, event_id=ids[statement]),
                                                   tx=tx)
            relationships += done.decision != "noop"
        return facts, relationships

    async def _withdraw(self, tx: Tx, namespace: str, session_id: str, gone: list[Asserted],
                        provenance: Provenance) -> int:
        """Withdraw each statement an earlier version found in this session and this one does not."""
        withdrawn = 0
        for item in gone:
            e = item.event
            origin = provenance.origin(session_id, event_id="wdr_" + _digest(e["id"]), withdraws=e["id"],
                                       reason=reason(provenance.version, e))
            when = native(e["valid_from"])
            written: RememberResult | RelateResult
            if item.kind == "fact":
                fact = FactAssertion.model_construct(subject=e["subject_key"], predicate=e["predicate"],
                                                     object=e["object_value"], valid_from=when, op="retract",
                                                     source=e.get("source") or "stated")
                written = await self.facts.remember(namespace, fact, origin, tx=tx)
            else:
                subject = {"id": e["subject_id"], "key": e["subject_key"], "name": e["subject_key"], "type": "other"}
                obj = {"id": e["object_id"], "key": e["object_key"], "name": e["object_key"], "type": "other"}
                relation = RelationshipAssertion.model_construct(subject=e["subject_key"], type=e["relation"],
                                                                 object=e["object_key"], valid_from=when, op="retract")
                written = await self.relationships.relate(namespace, relation, (subject, obj), origin, tx=tx)
            withdrawn += written.decision != "noop"
        return withdrawn



async def _hold_merges(tx: Tx, namespace: str, session_id: str, entities: Sequence[ExtractedEntity],
                       turns: Mapping[str, ChunkTurn], todo: Sequence[int], resolutions: Sequence[Any],
                       brief: Mapping[str, Mapping[str, Any]]) -> dict[int, str]:
    """Entity merges across trust levels: an untrusted mention resolved into a trusted entity is
    held (its link carries the id `confirm` takes, and the entity is rebuilt without it); a new
    entity made by one is untrusted; a trusted mention of an untrusted entity vouches for it."""
    held: dict[int, str] = {}
    marks: list[dict[str, Any]] = []
    for i, r in zip(todo, resolutions):
        untrusted = trust_of(entities[i].evidence_turn_ids, turns) == "untrusted"
        stored = brief[r.entity_id].get("trust")
        if untrusted and r.created:
            marks.append({"id": r.entity_id, "trust": "untrusted"})
        elif untrusted and stored is None:
            held[i] = "mrg_" + _digest(namespace, session_id, r.entity_id, normalize(entities[i].name))
        elif not untrusted and stored is not None:
            marks.append({"id": r.entity_id, "trust": None})
    if marks:
        await tx.run("entities/trust", rows=marks)
    return held


def trust_of(evidence: Sequence[str], turns: Mapping[str, ChunkTurn]) -> Trust:
    """A statement is trusted when a trusted turn says it. Without known evidence it is as trusted
    as the session's least trusted turn: leaving the evidence out must not launder a tool's output."""
    cited = [turns[t] for t in evidence if t in turns]
    said = any(t.trust == "trusted" for t in cited) if cited else all(t.trust == "trusted" for t in turns.values())
    return "trusted" if said else "untrusted"


def _ends(namespace: str, r: Any, names: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [names.get(normalize(n)) or _named(namespace, n) for n in (r.from_, r.to)]


def _statements(namespace: str, session_id: str, result: ExtractionResult,
                names: Mapping[str, Mapping[str, Any]]) -> dict[tuple, str]:
    """Each extracted fact and relationship -> its statement key (the first generation's event id)."""
    out: dict[tuple, str] = {}
    for f in result.facts:
        out[("fact", *fact_key(f))] = "fev_" + _digest(namespace, session_id, *fact_key(f))
    for r in result.relationships:
        a, b = _ends(namespace, r, names)
        key = ("relationship", a["id"], r.relation, b["id"], r.retracts)
        out[key] = "rev_" + _digest(namespace, session_id, a["id"], r.relation, b["id"], r.retracts)
    return out


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
