"""Readers that turn files into messages. A bad line is reported with file:line and the reason,
and never stops the lines around it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

from pydantic import ValidationError

from kg.core.models.turns import Attachment, Message


@dataclass(frozen=True)
class Rejected:
    where: str  # file:line
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "line"
        parts.append(f"{field}: {err['msg']}")
    return "; ".join(parts)


def json_lines(lines: Iterable[bytes], name: str) -> Iterator[tuple[str, dict[str, Any]] | Rejected]:
    """(file:line, object) of each non-blank line of JSON Lines; a line that is not UTF-8, not JSON or
    not a JSON object is a `Rejected`, and the lines after it go on."""
    for lineno, raw in enumerate(lines, start=1):
        where = f"{name}:{lineno}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield Rejected(where, f"not valid UTF-8 (byte {exc.start})")
            continue
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield Rejected(where, f"malformed JSON: {exc.msg} (column {exc.colno})")
            continue
        yield (where, value) if isinstance(value, dict) else Rejected(where, "expected a JSON object")


def messages_only(items: Iterable[Message | Rejected], rejected: list[str]) -> Iterator[Message]:
    """The messages of a reader's stream, for the ingest; each rejection, as `file:line: why`, goes to
    `rejected`."""
    for item in items:
        if isinstance(item, Rejected):
            rejected.append(str(item))
        else:
            yield item


def read_jsonl(path: Path, namespace: str | None = None, max_chars: int | None = None) -> Iterator[Message | Rejected]:
    """One JSON object per line: namespace, session_id?, role, speaker?, text, ts (ISO 8601),
    attachments? ([{kind, caption, url?}])."""
    with open(path, "rb") as fh:
        for entry in json_lines(fh, str(path)):
            if isinstance(entry, Rejected):
                yield entry
                continue
            where, obj = entry
            if namespace and "namespace" not in obj:
                obj["namespace"] = namespace
            if max_chars is not None and isinstance(obj.get("text"), str) and len(obj["text"]) > max_chars:
                yield Rejected(where, f"text is {len(obj['text'])} characters, over the limit of {max_chars}")
                continue
            try:
                yield Message.model_validate(obj)
            except ValidationError as exc:
                yield Rejected(where, explain(exc))


LOCOMO_DATE = "%I:%M %p on %d %B, %Y"
LOCOMO_TURN_SPACING = timedelta(seconds=30)


def parse_locomo_date(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> 2023-05-08T13:56:00Z."""
    return datetime.strptime(value.strip(), LOCOMO_DATE).replace(tzinfo=timezone.utc)


def _locomo_image(turn: dict) -> list[Attachment]:
    """A shared photo (`blip_caption`, `img_url`: a list, its first element) as an image attachment."""
    caption = turn.get("blip_caption")
    if not isinstance(caption, str) or not caption.strip():
        return []
    url = turn.get("img_url")
    url = url[0] if isinstance(url, list) and url else url
    return [Attachment(kind="image", caption=caption, url=url if isinstance(url, str) and url else None)]


def read_locomo(path: Path, namespace_prefix: str = "locomo") -> Iterator[Message | Rejected]:
    """The LoCoMo layout: one namespace per conversation, `session_<n>` as session ids, the
    session date-time as the first turn's time (turns follow 30 s apart), dia_id as external id, a
    shared photo's caption and url as an image attachment."""
    try:
        conversations = json.loads(Path(path).read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        yield Rejected(f"{path}:1", f"not a LoCoMo JSON file: {exc}")
        return
    for ci, conv in enumerate(conversations):
        sample = conv.get("sample_id", f"conv-{ci}")
        body = conv.get("conversation", {})
        speaker_a = body.get("speaker_a")
        sessions = sorted(
            (int(k.split("_")[1]) for k in body if k.startswith("session_") and k.split("_")[1].isdigit()
             and not k.endswith("date_time"))
        )
        for n in sessions:
            where = f"{path}:{sample}/session_{n}"
            try:
                start = parse_locomo_date(body[f"session_{n}_date_time"])
            except (KeyError, ValueError) as exc:
                yield Rejected(where, f"session date-time missing or unparsable: {exc}")
                continue
            for i, turn in enumerate(body[f"session_{n}"]):
                try:
                    yield Message(
                        namespace=f"{namespace_prefix}-{sample}",
                        role="user" if turn.get("speaker") == speaker_a else "assistant",
                        speaker=turn.get("speaker"),
                        text=turn.get("text", ""),
                        ts=start + i * LOCOMO_TURN_SPACING,
                        session_id=f"session_{n}",
                        external_id=turn.get("dia_id"),
                        attachments=_locomo_image(turn),
                    )
                except ValidationError as exc:
                    yield Rejected(f"{where}/{turn.get('dia_id', i)}", explain(exc))
