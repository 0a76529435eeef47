"""Creating an entity from a mention and folding further mentions into it (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .model import AttributeChange, Entity
from .profile import Profile


def _add(values: tuple[str, ...], value: str) -> tuple[str, ...]:
    return values if value in values else (*values, value)


def _union(store: dict[str, frozenset[str]], new: dict[str, str]) -> dict[str, frozenset[str]]:
    out = dict(store)
    for kind, value in new.items():
        out[kind] = out.get(kind, frozenset()) | {value}
    return out


def new_entity(entity_id: str, mention: Profile, vector: Sequence[float] | None = None) -> Entity:
    return absorb(Entity(id=entity_id, type=mention.type, name=mention.name), mention, vector)


def absorb(entity: Entity, mention: Profile, vector: Sequence[float] | None = None) -> Entity:
    """The entity with the mention merged in: its surface form and name become aliases, its
    identifiers join the cluster's, and its attributes overwrite older values (kept in history)."""
    attributes = dict(entity.attributes)
    history = list(entity.history)
    for key, value in mention.mention.attributes.items():
        old = attributes.get(key)
        if old is not None and old != value:
            history.append(AttributeChange(key, old, str(value)))
        attributes[key] = str(value)
    return replace(
        entity,
        name=_display_name(entity, mention),
        aliases=_add(entity.aliases, mention.mention.name),
        names=_add(entity.names, mention.name),
        keys=entity.keys | mention.lookup_keys,
        identifiers=_union(entity.identifiers, mention.identifiers),
        qualifiers=_union(entity.qualifiers, mention.qualifiers),
        attributes=attributes,
        history=tuple(history),
        mentions=entity.mentions + 1,
        vectors=(*entity.vectors, tuple(vector)) if vector is not None else entity.vectors,
    )


def _display_name(entity: Entity, mention: Profile) -> str:
    """Keep the first name seen unless a more informative (longer, non-acronym) one arrives."""
    if entity.mentions == 0 or (mention.low_information is False and len(entity.name) < 4):
        return mention.name
    return entity.name
