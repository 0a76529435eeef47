"""An entity rebuilt from the mentions that remain, after an erase: the resolver's own fold
(`new_entity`, then `absorb` of each later mention, in the order they were said), so an alias or
an attribute only an erased turn taught leaves with it, and one another turn taught stays.

Each `MENTIONS` link keeps what its mention taught (the extracted aliases and attributes). Links
written before they were kept carry neither: such an entity is left as it is (docs/forgetting.md).
A `held` link (an untrusted mention of a trusted entity, docs/trust.md) is left out until confirmed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kg.core.settings.dedup import DedupSettings
from kg.core.store.store import Tx

from .entity import absorb, new_entity
from .model import Entity, Mention
from .neo4j_source import to_props
from .profile import profile

# What the resolver writes on an entity (kg.ingest.dedup.neo4j_source.to_props): removed from an
# entity no mention of which remains, which is then the bare node a fact or relationship names.
_RESOLVER_PROPS = ("aliases", "names", "keys", "identifiers", "qualifiers", "attributes", "attribute_history",
                   "mentions", "search_names", "search_scope")


def fold(entity_id: str, entity_type: str, mentions: Sequence[Mapping[str, Any]],
         settings: DedupSettings) -> Entity | None:
    """The entity the remaining mentions make (None: none remains). One extracted mention may have
    several evidence turns (one link each): it is absorbed once per session."""
    entity: Entity | None = None
    seen: set[tuple[Any, ...]] = set()
    for m in mentions:
        if m.get("held"):  # an untrusted mention waiting for `confirm`: not part of the entity yet
            continue
        key = (m["session_id"], m["surface_key"], m["type"])
        if key in seen:
            continue
        seen.add(key)
        said = profile(Mention(m["surface"], m["type"], json.loads(m["attributes"] or "{}")), settings)
        entity = replace(new_entity(entity_id, said), type=entity_type) if entity is None else absorb(entity, said)
        for alias in m["aliases"] or ():
            entity = absorb(entity, profile(Mention(alias, m["type"]), settings))
    return entity


def _props(entity: Entity | None, namespace: str) -> dict[str, Any]:
    if entity is None:
        return dict.fromkeys(_RESOLVER_PROPS)
    props = to_props(entity, namespace)
    return {k: v for k, v in props.items() if k in _RESOLVER_PROPS or k == "name"}


async def rebuild(tx: Tx, namespace: str, entity_ids: Iterable[str], settings: DedupSettings) -> int:
    """Rebuild the resolver's part of each entity from its remaining mentions; how many were rebuilt."""
    rows = await tx.run("entities/mentions_remaining", ids=sorted(set(entity_ids)))
    entities = []
    for row in rows:
        mentions = row["mentions"]
        if any(m["attributes"] is None for m in mentions) or not (mentions or row["registered"]):
            continue  # mentions from before provenance was kept, or a bare node: nothing to redo
        entity = fold(row["id"], row["type"], mentions, settings)
        props = _props(entity, namespace)
        entities.append({
            "id": row["id"], "props": props, "keys": sorted(entity.keys) if entity else [],
            "identifiers": props.get("identifiers") or [],
            "names": sorted({*entity.aliases, *entity.names}) if entity else [],
        })
    if entities:
        await tx.run("entities/rebuild", entities=entities)
    return len(entities)
