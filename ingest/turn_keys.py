"""A turn's own key: the text its embedding and its fulltext entry are made from.

    "Maya: I moved to Lisbon. [image: a photo of a tram]"

The speaker's name, then the text as sent, then each attachment as ` [kind: caption]`. Without a
speaker the key has no prefix (a role word such as "user" would be the same in every turn and
only blur the vectors). The stored `text` stays what the caller sent; the key is stored beside
it as `Turn.key_text`. Migration 0009 backfills the same key for turns written before keys
existed (they had no attachments), in Cypher: keep the two in step. See docs/turn-keys.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kg.core.models import Attachment, attachments_of


def attachment_text(attachments: Iterable[Attachment]) -> str:
    """The attachments as they appear in keys: ` [image: a photo of a tram]` each."""
    return "".join(f" [{a.kind}: {' '.join(a.caption.split())}]" for a in attachments)


def turn_key(speaker: str | None, text: str, attachments: Iterable[Attachment] = ()) -> str:
    name = (speaker or "").strip()
    return (f"{name}: {text}" if name else text) + attachment_text(attachments)


def stored_attachments(row: Mapping[str, Any]) -> list[Attachment]:
    """A row's attachments from the node's parallel lists (`kg.core.models.attachment_columns`)."""
    return attachments_of(row.get("attachment_kinds"), row.get("attachment_captions"), row.get("attachment_urls"))


def row_key(row: Mapping[str, Any]) -> str:
    """The key of a stored turn from a row with speaker, text and the attachment lists."""
    return turn_key(row.get("speaker"), row["text"], stored_attachments(row))
