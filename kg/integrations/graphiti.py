"""Move a Graphiti graph over: read one group through graphiti-core's own classes, write it as
turns, entities and bi-temporal facts of a namespace.

    Episodic  -> Turn(s) in sessions (the namespace's time-gap rule), external_id graphiti:<uuid>#<i>
    Entity    -> Entity (same id as `remember` derives from the name, so facts meet it)
    RELATES_TO-> Fact through `AsyncMemory.remember`: assert at valid_at (recorded at created_at),
                 retract at invalid_at (recorded at expired_at); the episodes become evidence turns

The Graphiti graph is only read. Re-importing skips what is already there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Awaitable, Callable, TypeVar

from pydantic import BaseModel, Field

from kg.core.extras import require

require("graphiti", "graphiti_core")

from graphiti_core.driver.neo4j_driver import Neo4jDriver
from graphiti_core.edges import EntityEdge
from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode

from kg.core.models.facts import entity_id, entity_key, predicate_key
from kg.core.models.requests import Op, Source
from kg.core.models.turns import ROLES, Message, as_utc
from kg.core.models.values import native
from kg.memory import AsyncMemory

T = TypeVar("T")
PAGE = 500

# "Alice: hi", "user: hi", "Alice (user): hi": graphiti's message episodes, one line per message.
_LINE = re.compile(r"^(?P<speaker>[^:\n()]{1,100}?)\s*(?:\((?P<role>user|assistant|system|tool)\))?:\s+(?P<text>.*)$",
                   re.IGNORECASE)
_ASSISTANT_NAMES = {"assistant", "ai", "bot", "agent"}
_TYPES = {"person": "person", "organization": "organization", "company": "organization", "place": "place",
          "location": "place", "product": "product", "order": "order", "concept": "concept", "topic": "concept",
          "event": "event"}


@dataclass(frozen=True)
class GraphitiSource:
    """Where the Graphiti graph lives (by default: the same database as the memory)."""

    uri: str
    user: str
    password: str | None
    database: str = "neo4j"


class GraphitiImportReport(BaseModel):
    group_id: str
    namespace: str
    episodes: int = 0
    turns_written: int = 0
    turns_existing: int = 0
    entities: int = 0
    edges: int = 0
    facts_asserted: int = 0
    facts_retracted: int = 0
    skipped: list[str] = Field(default_factory=list)  # what was not imported, and why


def episode_messages(episode: EpisodicNode, namespace: str) -> list[Message]:
    """The turns of one episode: one per `speaker: text` line of a message episode (continuation
    lines join the previous turn); a text or JSON episode is one `system` turn."""
    ts = as_utc(episode.valid_at)
    content = episode.content.strip()
    if not content:
        return []
    parts: list[dict[str, Any]] = []
    if episode.source == EpisodeType.message:
        for line in content.splitlines():
            match = _LINE.match(line.strip())
            if match:
                parts.append(_speaker_role(match["speaker"].strip(), match["role"]) | {"text": match["text"]})
            elif parts:
                parts[-1]["text"] += "\n" + line
            elif line.strip():
                parts.append({"role": "user", "speaker": None, "text": line})
    else:
        parts.append({"role": "system", "speaker": episode.source_description or episode.name, "text": content})
    return [Message(namespace=namespace, ts=ts, external_id=f"graphiti:{episode.uuid}#{i}", **p)
            for i, p in enumerate(parts) if p["text"].strip()]


def _speaker_role(speaker: str, role: str | None) -> dict[str, Any]:
    if role:
        return {"role": role.lower(), "speaker": speaker}
    lowered = speaker.lower()
    if lowered in ROLES:
        return {"role": lowered, "speaker": None}
    if lowered in _ASSISTANT_NAMES:
        return {"role": "assistant", "speaker": speaker}
    return {"role": "user", "speaker": speaker}


def entity_type(labels: list[str]) -> str:
    for label in labels:
        if label != "Entity" and label.lower() in _TYPES:
            return _TYPES[label.lower()]
    return "other"


async def _pages(fetch: Callable[[str | None], Awaitable[list[T]]]) -> list[T]:
    """Every item of a graphiti `get_by_group_ids` (ordered by uuid, descending), page by page."""
    out: list[T] = []
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        out.extend(page)
        if len(page) < PAGE:
            return out
        cursor = page[-1].uuid  # type: ignore[attr-defined]


def open_graphiti(source: GraphitiSource) -> Neo4jDriver:
    driver = Neo4jDriver(source.uri, source.user, source.password, source.database)
    init = getattr(driver, "_init_task", None)
    if init is not None:  # graphiti schedules its index build; an import only reads
        init.cancel()
    return driver


async def import_graphiti(
    memory: AsyncMemory,
    source: GraphitiSource,
    group_id: str,
    namespace: str,
    fact_source: Source = "stated",
    echo: Callable[[str], None] = lambda _: None,
) -> GraphitiImportReport:
    """Import Graphiti group `group_id` into `namespace` (see the module docstring)."""
    report = GraphitiImportReport(group_id=group_id, namespace=namespace)
    driver = open_graphiti(source)
    try:
        groups = [group_id]
        episodes = await _pages(lambda c: EpisodicNode.get_by_group_ids(driver, groups, limit=PAGE, uuid_cursor=c))
        entities = await _pages(lambda c: EntityNode.get_by_group_ids(driver, groups, limit=PAGE, uuid_cursor=c))
        edges = await _pages(lambda c: EntityEdge.get_by_group_ids(driver, groups, limit=PAGE, uuid_cursor=c))
    finally:
        await driver.close()
    echo(f"read {len(episodes)} episodes, {len(entities)} entities, {len(edges)} edges of group {group_id!r}")

    evidence = await _import_episodes(memory, episodes, namespace, report)
    types = await _import_entities(memory, entities, namespace, report)
    await _import_edges(memory, edges, entities, types, evidence, namespace, fact_source, report)
    return report


async def _import_episodes(memory: AsyncMemory, episodes: list[EpisodicNode], namespace: str,
                           report: GraphitiImportReport) -> dict[str, list[str]]:
    """Writes the turns; returns episode uuid -> its turn ids (the evidence of the facts)."""
    messages: list[Message] = []
    for episode in sorted(episodes, key=lambda e: (e.valid_at, e.created_at, e.uuid)):
        said = episode_messages(episode, namespace)
        if not said:
            report.skipped.append(f"episode {episode.uuid}: empty content")
        messages.extend(said)
    report.episodes = len(episodes)
    ingested = await memory.ingest(messages)
    report.turns_written, report.turns_existing = ingested.written, ingested.existing
    rows = await memory.store.read("turns/by_external_id", namespace=namespace,
                                   external_ids=[m.external_id for m in messages])
    turns: dict[str, list[str]] = {}
    for row in rows:
        episode_uuid = row["external_id"].removeprefix("graphiti:").rsplit("#", 1)[0]
        turns.setdefault(episode_uuid, []).append(row["id"])
    return turns


async def _import_entities(memory: AsyncMemory, entities: list[EntityNode], namespace: str,
                           report: GraphitiImportReport) -> dict[str, str]:
    """Merges the entities (several graphiti nodes of one name become one entity, remembering
    every uuid); returns graphiti uuid -> entity type."""
    rows, types = [], {}
    for node in entities:
        try:
            key = entity_key(node.name)
        except ValueError:
            report.skipped.append(f"entity {node.uuid}: blank name")
            continue
        types[node.uuid] = entity_type(node.labels)
        rows.append({"id": entity_id(namespace, key), "key": key, "name": " ".join(node.name.split()),
                     "type": types[node.uuid], "summary": node.summary or None, "uuid": node.uuid,
                     "created_at": as_utc(node.created_at)})
    if rows:
        await memory.store.write("import/graphiti_entities_merge", namespace=namespace, entities=rows)
    report.entities = len({r["id"] for r in rows})
    return types


async def _import_edges(memory: AsyncMemory, edges: list[EntityEdge], entities: list[EntityNode],
                        types: dict[str, str], evidence: dict[str, list[str]], namespace: str,
                        fact_source: Source, report: GraphitiImportReport) -> None:
    """Asserts and retractions in transaction-time order (each fact slot's time only moves forward)."""
    names = {n.uuid: n.name for n in entities}
    events: list[tuple[datetime, int, EntityEdge]] = []
    for edge in edges:
        if edge.source_node_uuid not in names or edge.target_node_uuid not in names:
            report.skipped.append(f"edge {edge.uuid}: an end node is outside the group")
            continue
        events.append((as_utc(edge.created_at), 0, edge))
        if edge.invalid_at is not None or edge.expired_at is not None:
            events.append((as_utc(edge.expired_at or edge.created_at), 1, edge))
    report.edges = len({e.uuid for _, _, e in events})
    rows = await memory.store.read("import/graphiti_events_imported", namespace=namespace)
    done = {(r["subject_key"], r["predicate"], r["op"], r["object_value"], native(r["recorded_at"]))
            for r in rows}
    for recorded_at, retract, edge in sorted(events, key=lambda ev: (ev[0], ev[1], ev[2].uuid)):
        subject, obj = names[edge.source_node_uuid], names[edge.target_node_uuid]
        op: Op = "retract" if retract else "assert"
        if (entity_key(subject), predicate_key(edge.name), op, obj.strip(), recorded_at) in done:
            continue  # imported before
        valid_from = edge.valid_at or edge.reference_time or edge.created_at
        if retract:  # invalid_at: the end in valid time; expired alone: given up when graphiti expired it
            valid_from = edge.invalid_at or edge.expired_at or valid_from
        turn_ids = [t for episode in edge.episodes for t in evidence.get(episode, [])]
        try:
            await memory.remember(
                namespace, subject, edge.name, obj, valid_from=as_utc(valid_from), recorded_at=recorded_at,
                source=fact_source, op=op, evidence_turn_ids=turn_ids, extractor="graphiti",
                subject_type=types.get(edge.source_node_uuid, "other"),
                object_type=types.get(edge.target_node_uuid, "other"),
            )
        except ValueError as exc:  # e.g. already imported: the slot's transaction time is later
            report.skipped.append(f"edge {edge.uuid} ({op}): {exc}")
            continue
        if retract:
            report.facts_retracted += 1
        else:
            report.facts_asserted += 1
