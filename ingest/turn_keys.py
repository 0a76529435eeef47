"""A turn's own key: the text its embedding and its fulltext entry are made from.

    "Maya: I moved to Lisbon. [image: a photo of a tram]"

The speaker's name, then the text as sent, then each attachment as ` [kind: caption]`. Without a
speaker the key has no prefix (a role word such as "user" would be the same in every turn and
only blur the vectors). The stored `text` stays what the caller sent; the key is stored beside
it as `Turn.key_text`. Migration 0009 backfills the same key for turns written before keys
existed (they had no attachments), in Cypher: keep the two in step. See docs/turn-keys.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kg.core.embedders.base import TextEmbedder, passages
from kg.core.models.turns import Attachment, attachments_of
from kg.core.settings.tree import IngestSettings


def attachment_text(attachments: Iterable[Attachment]) -> str:
    """The attachments as they appear in keys: ` [image: a photo of a tram]` each."""
    return "".join(f" [{a.kind}: {' '.join(a.caption.split())}]" for a in attachments)


def turn_key(speaker: str | None, text: str, attachments: Iterable[Attachment] = ()) -> str:
    name = (speaker or "").strip()
    return (f"{name}: {text}" if name else text) + attachment_text(attachments)


def stored_attachments(row: Mapping[str, Any]) -> list[Attachment]:
    """A row's attachments from the node's parallel lists (`kg.core.models.turns.attachment_columns`)."""
    return attachments_of(row.get("attachment_kinds"), row.get("attachment_captions"), row.get("attachment_urls"))


def row_key(row: Mapping[str, Any]) -> str:
    """The key of a stored turn from a row with speaker, text and the attachment lists."""
    return turn_key(row.get("speaker"), row["text"], stored_attachments(row))


@dataclass(frozen=True)
class KeyVectors:
    """A key's vectors: its first part's (the turn's `embedding`), and the later parts' flattened
    into one list (`passage_embeddings`; None when the key is one part). `cut`: the key had more
    parts than `[ingest] max_passages`, its tail is searched by its words only."""

    vector: list[float]
    passages: list[float] | None
    cut: bool


async def embed_keys(embedder: TextEmbedder, keys: Sequence[str], settings: IngestSettings,
                     embed: Callable[[list[str]], Awaitable[list[list[float]]]]) -> list[KeyVectors]:
    """Every key in parts (`kg.core.embedders.base.passages`, as `embedder` cuts them), all parts embedded
    by `embed` in one call, regrouped per key. The one way turn keys are embedded: on ingest, by
    `kg reembed` and by the backfill job."""
    limit = settings.max_passages
    parts = passages(embedder, keys, settings.max_embed_chars, limit + 1)
    vectors = await embed([p for ps in parts for p in ps[:limit]])
    out, at = [], 0
    for ps in parts:
        n = min(len(ps), limit)
        mine = vectors[at:at + n]
        at += n
        out.append(KeyVectors(mine[0], [x for v in mine[1:] for x in v] if n > 1 else None, len(ps) > limit))
    return out
