"""`Message.verbatim`, the message as the caller's framework shaped it: stored with the turn, returned
by `turns` (Python) and `GET /sessions/{id}` (HTTP), never searched, no part of the turn's identity;
an overlong one refused naming the field."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import httpx

from kg import AsyncMemory
from kg.core.models.turns import Message
from tests.http_client import api, msg

T0 = datetime(2025, 5, 1, 12, tzinfo=timezone.utc)
RAW = json.dumps({"type": "message", "role": "user", "id": "m1", "content": [{"type": "text", "text": "Lisbon"}]})


async def test_kept_with_the_turn_and_out_of_its_identity(memory: AsyncMemory, namespace: str) -> None:
    said = Message(namespace=namespace, session_id="s", role="user", text="Lisbon", ts=T0, verbatim=RAW)
    report = await memory.ingest([said])
    assert report.written == 1
    [turn] = await memory.turns(namespace, "s")
    assert turn.verbatim == RAW
    again = await memory.ingest([said.model_copy(update={"verbatim": '{"other": true}'})])
    assert (again.written, again.existing) == (0, 1)  # the same message: the turn stays as it was
    assert [t.verbatim for t in await memory.turns(namespace, "s")] == [RAW]
    assert [h.turn.verbatim for h in await memory.search_turns(namespace, "m1 content type", k=5, recipe="bm25")] == []
    plain = await memory.add_message(namespace, "assistant", "Tram 28", ts=T0, session_id="s")
    assert plain.verbatim is None


async def test_through_http(api: httpx.AsyncClient, namespace: str) -> None:
    body = {"messages": [msg("Lisbon", 0, session_id="s", verbatim=RAW), msg("long", 1, session_id="s",
                                                                                verbatim="x" * 1001)]}
    done = await api.post(f"/v1/namespaces/{namespace}/messages", json=body)
    assert done.status_code == 207, done.text
    assert done.json()["items"][1]["errors"] == [
        {"field": "messages[1].verbatim", "message": "longer than 1000 characters ([ingest] max_text_chars)"}]
    [turn] = (await api.get(f"/v1/namespaces/{namespace}/sessions/s")).json()["turns"]
    assert turn["verbatim"] == RAW
