"""Turn keys: attachments on messages, the key a turn is embedded and searched by ("Maya: text
[image: caption]"), turn ids that stay what they were without attachments, and `kg reembed`
rebuilding the keys of turns written before keys existed."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from kg import AsyncMemory, cypher, load_settings
from kg.core.models.turns import ATTACHMENTS_MAX, Attachment, Message
from kg.ingest.loaders import Rejected, read_jsonl
from kg.ingest.reembed import reembed
from kg.ingest.sessions import TurnIds
from kg.ingest.turn_keys import turn_key
from tests.cypher_state import cypher_rows
from tests.http_client import api

T0 = datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)
TRAM = {"kind": "image", "caption": "a photo of a yellow tram on a steep street", "url": "https://example.org/t.jpg"}


def test_key_text_names_the_speaker_and_the_attachments() -> None:
    tram = Attachment(kind="image", caption="a photo of a tram")
    assert turn_key("Maya", "I moved to Lisbon.", [tram]) == "Maya: I moved to Lisbon. [image: a photo of a tram]"
    assert turn_key(None, "I moved to Lisbon.") == "I moved to Lisbon."  # no speaker, no prefix (not the role)
    assert turn_key("  ", "Hi") == "Hi"
    two = [tram, Attachment(kind="file", caption="lease\n  contract.pdf", url="https://x.org/l.pdf")]
    assert turn_key("Maya", "Here.", two) == "Maya: Here. [image: a photo of a tram] [file: lease contract.pdf]"


def test_turn_ids_are_unchanged_without_attachments() -> None:
    """Ids with a session id were computed by the rule before attachments existed: stored turns keep them."""
    maya = Message(namespace="acme", role="user", speaker="Maya", text="I moved to Lisbon.", ts=T0, session_id="trip")
    ids = TurnIds()
    # a repeat is the same turn (docs/reliability.md, "Identity"): no `#1` suffix any more
    assert (ids.next(maya, "trip"), ids.next(maya, "trip")) == ("t-e94f0c25bd37f9fef9cd9a30",
                                                                "t-e94f0c25bd37f9fef9cd9a30")
    # Without a session id the id leaves the session out: a later message may move the turn to
    # another automatic session (docs/reliability.md); re-sent turns stored under the old rule are
    # found by their content, not their id (tests/test_turn_identity.py).
    plain = Message(namespace="acme", role="assistant", text="Noted.", ts=T0 + timedelta(minutes=1))
    assert TurnIds().next(plain, "s-x") == TurnIds().next(plain, "s-y") == "t-d4c1d5e651e1cc9e0999c249"

    with_photo = maya.model_copy(update={"attachments": [Attachment(**TRAM)]})
    other_photo = maya.model_copy(update={"attachments": [Attachment(kind="image", caption="a cat")]})
    first = TurnIds().next(with_photo, "trip")
    assert first != "t-e94f0c25bd37f9fef9cd9a30"
    assert first == TurnIds().next(with_photo, "trip") != TurnIds().next(other_photo, "trip")


def test_bad_attachments_name_their_field() -> None:
    base = {"namespace": "acme", "role": "user", "text": "Look", "ts": T0}
    with pytest.raises(ValidationError) as bad:
        Message(**base, attachments=[TRAM, {"kind": "image", "caption": "   "}, {"kind": "bad kind!", "caption": "x"},
                                     {"caption": "no kind"}, {**TRAM, "size": 3}])
    where = {e["loc"]: e["msg"] for e in bad.value.errors()}
    assert "blank" in where[("attachments", 1, "caption")]
    assert ("attachments", 2, "kind") in where and ("attachments", 3, "kind") in where
    assert "not permitted" in where[("attachments", 4, "size")]
    with pytest.raises(ValidationError, match="at most 16"):
        Message(**base, attachments=[TRAM] * (ATTACHMENTS_MAX + 1))
    with pytest.raises(ValidationError, match="at most 2000"):
        Message(**base, attachments=[{"kind": "image", "caption": "x" * 2001}])


def test_jsonl_lines_carry_attachments(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    good = {"namespace": "acme", "role": "user", "text": "Look", "ts": "2024-05-01T09:30:00Z", "attachments": [TRAM]}
    bad = {**good, "attachments": [TRAM, {"kind": "image", "caption": ""}]}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    message, rejected = list(read_jsonl(path))
    assert isinstance(message, Message) and message.attachments == [Attachment(**TRAM)]
    assert isinstance(rejected, Rejected) and rejected.where.endswith(":2")
    assert "attachments.1.caption" in rejected.reason


async def _small_talk(memory: AsyncMemory, namespace: str) -> str:
    """Three speakers whose words never name them; one shares a photo. Returns that turn's id."""
    await memory.add_turns(namespace, "chat", [
        {"role": "user", "speaker": "Zanele", "text": "I finally finished the pottery course.", "ts": T0},
        {"role": "assistant", "speaker": "Tomasz", "text": "Great, the weekend was quiet for me.",
         "ts": T0 + timedelta(seconds=30)},
    ])
    turn = await memory.add_message(namespace, "user", "Look what I saw this morning!", T0 + timedelta(minutes=1),
                                    speaker="Ines", session_id="chat", attachments=[TRAM])
    return turn.id


async def test_attachments_round_trip_and_keys_find_speaker_and_caption(memory: AsyncMemory, namespace: str) -> None:
    photo_id = await _small_talk(memory, namespace)
    stored = await memory.turns(namespace, "chat")
    assert [t.attachments for t in stored] == [[], [], [Attachment(**TRAM)]]
    assert stored[2].id == photo_id and stored[2].text == "Look what I saw this morning!"  # the text as sent
    [node] = await cypher_rows(memory, "MATCH (t:Turn {id: $id}) RETURN t.text AS text, t.key_text AS key, "
                                       "t.attachment_urls AS urls", id=photo_id)
    assert node["key"] == "Ines: Look what I saw this morning! [image: a photo of a yellow tram on a steep street]"
    assert node["urls"] == [TRAM["url"]]

    for recipe in ("bm25", "flat"):
        by_caption = await memory.retrieve(namespace, "the yellow tram", k=1, recipe=recipe)
        assert by_caption[0].turn.id == photo_id, recipe
        assert by_caption[0].turn.attachments == [Attachment(**TRAM)], recipe  # hydrated with the hit
        by_speaker = await memory.retrieve(namespace, "Zanele", k=1, recipe=recipe)
        assert by_speaker[0].turn.speaker == "Zanele", (recipe, by_speaker)
        by_speaker = await memory.retrieve(namespace, "what did Tomasz say?", k=1, recipe=recipe)
        assert by_speaker[0].turn.speaker == "Tomasz", (recipe, by_speaker)


async def test_http_messages_carry_attachments(api: httpx.AsyncClient, namespace: str) -> None:
    ts = "2024-05-01T09:30:00Z"
    body = {"messages": [
        {"role": "user", "speaker": "Ines", "text": "Look!", "ts": ts, "session_id": "s1", "attachments": [TRAM]},
        {"role": "user", "text": "And this", "ts": ts, "session_id": "s1",
         "attachments": [TRAM, {"kind": "image", "caption": ""}]},
        {"role": "user", "text": "Too many", "ts": ts, "session_id": "s1", "attachments": [TRAM] * 17},
        {"role": "user", "text": "Odd", "ts": ts, "session_id": "s1", "attachments": [{"kind": "image", "caption": "c",
                                                                                      "url": None, "extra": 1}]},
    ]}
    r = await api.post(f"/v1/namespaces/{namespace}/messages", json=body)
    assert r.status_code == 207, r.text
    errors = {i["index"]: i["errors"] for i in r.json()["items"] if i["status"] == "rejected"}
    assert errors[1][0]["field"] == "messages[1].attachments[1].caption"
    assert errors[2][0]["field"] == "messages[2].attachments" and "16" in errors[2][0]["message"]
    assert errors[3][0]["field"] == "messages[3].attachments[0].extra"

    session = (await api.get(f"/v1/namespaces/{namespace}/sessions/s1")).json()
    assert session["turns"][0]["attachments"] == [TRAM]
    hits = (await api.get(f"/v1/namespaces/{namespace}/search", params={"q": "tram", "strategy": "bm25"})).json()
    assert hits[0]["turn"]["attachments"] == [TRAM]
    schema = (await api.get("/openapi.json")).json()["components"]["schemas"]
    assert set(schema["Attachment"]["required"]) == {"kind", "caption"}


OLD_TURN = """
MERGE (s:Session {namespace: $namespace, id: 'old'})
  ON CREATE SET s.started_at = $ts, s.ended_at = $ts, s.message_count = 2, s.status = 'open', s.last_turn_id = $id
CREATE (t:Turn {id: $id, namespace: $namespace, session_id: 'old', idx: $idx, role: 'user', speaker: $speaker,
                text: $text, ts: $ts, embedding_model: $model, created_at: datetime()})
CREATE (s)-[:HAS_TURN]->(t)
WITH t CALL db.create.setNodeVectorProperty(t, 'embedding', $vector)
"""


async def test_reembed_gives_old_turns_their_keys(memory: AsyncMemory, namespace: str) -> None:
    """Turns written before keys existed: text-only vector, no key_text. After `kg reembed` their
    speaker finds them, by words and by meaning."""
    old = [("Zanele", "I finally finished the pottery course."), ("Tomasz", "Great, the weekend was quiet for me.")]
    for i, (speaker, text) in enumerate(old):
        [vector] = memory.embedder.embed([text])
        await cypher_rows(memory, OLD_TURN, namespace=namespace, id=f"t-old-{namespace}-{i}", idx=i, speaker=speaker,
                          text=text, ts=T0 + timedelta(seconds=30 * i), model=memory.embedder.name, vector=vector)
    assert await memory.retrieve(namespace, "Zanele", k=1, recipe="bm25") == []

    seen: list[tuple[int, int]] = []
    await reembed(load_settings(), on_progress=lambda done, total: seen.append((done, total)))

    assert seen and seen[-1][0] == seen[-1][1]
    async with AsyncMemory(load_settings()) as fresh:
        for recipe in ("bm25", "flat"):
            for speaker, _ in old:
                hits = await fresh.retrieve(namespace, speaker, k=1, recipe=recipe)
                assert hits[0].turn.speaker == speaker, (recipe, speaker, hits)
    rows = await cypher_rows(memory, "MATCH (t:Turn {namespace: $namespace}) RETURN t.key_text AS key ORDER BY t.idx",
                             namespace=namespace)
    assert [r["key"] for r in rows] == [f"{s}: {t}" for s, t in old]


async def test_migration_backfills_the_same_key_as_ingest(memory: AsyncMemory, namespace: str) -> None:
    """Migration 0009 computes old turns' keys in Cypher; they must equal `turn_key`'s."""
    old = [("Zanele", "I finally finished the pottery course."), (None, "No speaker here."), ("  ", "Blank.")]
    for i, (speaker, text) in enumerate(old):
        await cypher_rows(memory, OLD_TURN, namespace=namespace, id=f"t-old-{namespace}-{i}", idx=i, speaker=speaker,
                          text=text, ts=T0 + timedelta(seconds=30 * i), model=memory.embedder.name,
                          vector=[0.1] * memory.embedder.dim)
    [backfill] = [s for s in cypher.statements("migrations/0012_turn_key_text") if "key_text IS NULL" in s]
    async with memory.store.driver.session(database=memory.store.database) as session:  # CALL {...} IN TRANSACTIONS
        await (await session.run(backfill)).consume()  # runs only in an auto-commit transaction
    rows = await cypher_rows(memory, "MATCH (t:Turn {namespace: $namespace}) RETURN t.key_text AS key ORDER BY t.idx",
                             namespace=namespace)
    assert [r["key"] for r in rows] == [turn_key(s, t) for s, t in old]
    hits = await memory.retrieve(namespace, "Zanele", k=1, recipe="bm25")
    assert hits[0].turn.speaker == "Zanele"
