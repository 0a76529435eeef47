"""Session summaries on the real Neo4j: replacement and versioning, the three triggers, the
hierarchical rollup within the token budget, the LLM summarizer through the fake HTTP endpoint."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from pydantic import SecretStr

from kg import AsyncMemory
from kg.core.prompts.extraction import ChunkTurn
from kg.core.prompts.summaries import Part
from kg.core.settings.tree import LLMService, Settings
from kg.ingest.extraction.chunking import estimate_tokens
from kg.ingest.reembed import embed_missing
from kg.ingest.summaries.keys import context_texts, context_vectors, quoted_vector, short_replies
from kg.ingest.summaries.llm import LLMSummarizer, summarizer_for
from kg.ingest.summaries.offline import OfflineSummarizer, keyphrases
from kg.ingest.summaries.plan import rollup_groups, windows
from kg.ingest.summaries.writer import SessionSummarizer
from tests.cypher_state import cypher_rows, statements_counted
from tests.fake_llm import FakeLLM, Reply, SeenRequest, fake_llm
from tests.transcripts import transcript

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
LINES = transcript("""
Maya: We need a time-series database for the sensor project.
Bot: TimescaleDB and InfluxDB both fit; TimescaleDB keeps SQL and Postgres tooling.
Maya: Let's go with TimescaleDB then, our team knows Postgres.
Bot: Good choice. I will draft the hypertable schema for the sensor readings.
Maya: Retention should be ninety days for raw readings.
Bot: Noted: a ninety day retention policy with hourly rollups kept for two years.
""")


def messages(n: int, start: datetime = T0, offset: int = 0) -> list[dict]:
    out = []
    for i in range(n):
        role, speaker, text = LINES[(i + offset) % len(LINES)]
        out.append({"role": role, "speaker": speaker, "text": f"{text} (note {i + offset})",
                    "ts": start + timedelta(seconds=30 * i)})
    return out


def summarizer(memory: AsyncMemory, **summaries: int) -> SessionSummarizer:
    settings = memory.settings.model_copy(deep=True)
    for key, value in summaries.items():
        setattr(settings.memory.summaries, key, value)
    return SessionSummarizer(memory.store, memory.embedder, settings,
                             OfflineSummarizer(settings.memory.summaries, memory.embedder))


# -- pure -------------------------------------------------------------------------------------
def _turns(n: int, chars: int = 80) -> list[ChunkTurn]:
    return [ChunkTurn(id=f"t{i}", idx=i, speaker="A", text="x" * chars) for i in range(n)]


def test_windows_respect_turn_count_and_token_budget() -> None:
    assert [len(w) for w in windows(_turns(10), window_turns=4, budget=10_000)] == [4, 4, 2]
    cut = windows(_turns(10, chars=400), window_turns=40, budget=300)  # ~125 tokens a turn
    assert all(sum(estimate_tokens(t.text) for t in w) <= 300 for w in cut) and len(cut) == 5
    [[huge]] = windows([ChunkTurn(id="h", idx=0, text="y" * 10_000)], window_turns=4, budget=200)
    assert len(huge.text) < 800 and huge.text.endswith("[truncated for summarization]")


def test_rollup_groups_by_fanout_and_budget() -> None:
    parts = [Part(id=f"s{i}", slot=f"window:{i}", start=i, end=i + 1, text="w" * 400) for i in range(7)]
    assert [len(g) for g in rollup_groups(parts, fanout=3, budget=10_000)] == [3, 3, 1]
    assert [len(g) for g in rollup_groups(parts, fanout=8, budget=250)] == [2, 2, 2, 1]


def test_context_keys_lead_with_the_turn_then_name_speakers_and_neighbours() -> None:
    turns = [ChunkTurn(id=f"t{i}", idx=i, speaker=s, text=x) for i, (s, x) in
             enumerate([("Ann", "Who fixed it?"), ("Bo", "My sister did."), ("Ann", "Nice.")])]
    keys = context_texts(turns, width=1)
    assert keys[1] == "Bo: My sister did.\nAnn: Who fixed it?\nAnn: Nice."
    assert keys[0] == "Ann: Who fixed it?\nBo: My sister did."


def test_a_long_turn_keeps_its_whole_text_first_and_its_neighbours_clipped() -> None:
    long = "word " * 2000
    turns = [ChunkTurn(id=f"t{i}", idx=i, role=r, text=x) for i, (r, x) in
             enumerate([("assistant", long), ("user", "My cat is called Luna."), ("assistant", long)])]
    keys = context_texts(turns, width=2)
    assert keys[1].startswith("user: My cat is called Luna.\n")  # the short turn leads its own key
    assert keys[0].startswith("assistant: " + " ".join(long.split()))  # its own text whole
    before, after = keys[1].split("\n")[1:]
    assert len(before) <= 220 and len(after) <= 220  # neighbours clipped to the part nearest the turn:
    assert before.startswith("assistant: …") and after.endswith("…")  # the end of one before, the start of one after


def test_a_reply_to_a_short_question_follows_it_and_one_after_a_long_turn_ending_in_a_question_does_not() -> None:
    tips = "Here are a few ideas for your commute: podcasts, audiobooks, language lessons. " * 8
    turns = [ChunkTurn(id=f"t{i}", idx=i, role=r, text=x) for i, (r, x) in enumerate([
        ("user", "Where did you go last summer?"),
        ("assistant", "We went to Lisbon for two weeks, and the old town with its trams was the best part. " * 3),
        ("user", "What should I do on my commute?"),
        ("assistant", tips + "Would you like more?"),  # an answer closing on a follow-up question
        ("user", "Yes, something about history."),
        ("user", "Did you like it?"),
        ("assistant", "It was wonderful. " * 40),  # a long answer says enough in its own words
    ])]
    assert short_replies(turns) == [False, True, False, False, False, False, False]


def test_context_vectors_blend_the_turn_with_its_neighbours_mean() -> None:
    import numpy as np

    e = np.eye(4)
    own = [e[0].tolist(), e[1].tolist(), None, e[3].tolist()]
    keys = context_vectors(own, width=1, weight=2.0)
    assert keys[2] is None  # no vector of its own (the fallback model's): nothing to blend
    mixed = e[1] + 2.0 * e[0]  # turn 1's neighbours with a vector: turn 0 only
    assert np.allclose(keys[1], mixed / np.linalg.norm(mixed))
    assert np.allclose(keys[0], (e[0] + 2 * e[1]) / np.linalg.norm(e[0] + 2 * e[1]))
    both = context_vectors([e[0].tolist(), e[1].tolist(), e[2].tolist()], width=1, weight=1.0)[1]
    assert np.allclose(both, (e[0] + e[1] + e[2]) / np.sqrt(3))  # each neighbour weighs as much as the turn
    assert np.allclose(context_vectors(own, width=1, weight=0.0)[3], e[3])


def test_keyphrases_skip_chatter_and_names() -> None:
    phrases = keyphrases([t for _, _, t in LINES] * 2, 5, exclude={"maya"})
    assert any("timescaledb" in p for p in phrases)
    assert not any(p in {"great", "maya", "gonna"} for p in phrases)


# -- on the graph -------------------------------------------------------------------------------
async def test_close_session_summarizes_and_replaces_with_versions(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "db-choice", messages(6))
    first = await memory.close_session(namespace, "db-choice")
    assert first is not None and first.kind == "session" and first.version == 1
    assert first.model == "offline-extractive" and first.prompt_version == "extractive-v1"
    assert first.message_range == (0, 6) and first.started_at == T0
    assert any("timescaledb" in t for t in first.topics) and "Maya" in first.entities
    assert (await memory.session(namespace, "db-choice")).status == "closed"

    again = await memory.close_session(namespace, "db-choice")  # nothing new: the same summary
    assert again is not None and again.id == first.id and again.version == 1

    await memory.add_turns(namespace, "db-choice", messages(3, T0 + timedelta(minutes=5), offset=6))
    second = await memory.close_session(namespace, "db-choice")
    assert second is not None and second.version == 2 and second.message_range == (0, 9)
    current = await memory.summaries(namespace, "db-choice")
    assert [s.id for s in current] == [second.id]
    everything = await memory.summaries(namespace, "db-choice", include_expired=True)
    old = next(s for s in everything if s.id == first.id)
    assert old.expired_at is not None and old.version == 1

    hits = await memory.search_sessions(namespace, "which time-series database did we pick?", k=3)
    assert hits and hits[0].session.id == "db-choice" and hits[0].summary.id == second.id
    row = await memory.store.read_row("retrieval/summaries_vector", namespace=namespace,
                                      vector=memory.embedder.embed(["database"])[0], k=10, as_of=None)
    found = {summary_id for _, summary_id in row["hits"]}
    assert second.id in found and first.id not in found  # expired versions are never searched


async def test_a_summary_vector_is_made_of_the_turns_it_quotes_and_marks_its_session(memory: AsyncMemory,
                                                                                   namespace: str) -> None:
    """Closing embeds nothing: the offline summary's vector is the unit mean of the own vectors of the
    turns it quotes (their ids kept on the node, so `kg reembed` makes it again), however the writer
    cuts the text; a summary is found by that vector."""
    short = summarizer(memory)
    short.settings.ingest.max_embed_chars = 100
    for session_id, writer in (("whole", summarizer(memory)), ("cut", short)):
        await memory.add_turns(namespace, session_id, messages(6))
        summary = await writer.close(namespace, session_id)
        assert summary is not None and len(summary.text) > 100
        [row] = await cypher_rows(memory, "MATCH (x:Summary {id: $id})-[:SUMMARIZES]->(s:Session) "
                                  "RETURN x.embedding AS vector, x.quoted_turns AS quoted, x.text AS text, "
                                  "s.summarized_count AS count, s.summary_version AS version, s.status AS status",
                                  id=summary.id)
        turns = {r["id"]: r for r in await cypher_rows(
            memory, "MATCH (t:Turn {namespace: $ns, session_id: $sid}) RETURN t.id AS id, t.text AS text, "
            "t.embedding AS vector", ns=namespace, sid=session_id)}
        assert row["quoted"] and set(row["quoted"]) <= set(turns)
        assert all(" ".join(turns[t]["text"].split())[:40] in row["text"] for t in row["quoted"])  # quoted indeed
        quoted = quoted_vector([turns[t]["vector"] for t in row["quoted"]], memory.embedder.dim)
        assert quoted is not None and row["vector"] == pytest.approx(quoted, abs=1e-6)
        assert (row["count"], row["version"], row["status"]) == (6, 1, "closed")
        keys = await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns, session_id: $sid}) "
                                 "RETURN t.context_text AS text", ns=namespace, sid=session_id)
        assert len(keys) == 6 and all(k["text"] for k in keys)
    row = await memory.store.read_row("retrieval/summaries_vector", namespace=namespace,
                                      vector=memory.embedder.embed(["time-series database"])[0], k=1, as_of=None)
    assert row["hits"]


async def test_close_unknown_session_raises(memory: AsyncMemory, namespace: str) -> None:
    with pytest.raises(KeyError):
        await memory.close_session(namespace, "nope")


async def test_triggers_idle_and_message_count(memory: AsyncMemory, namespace: str) -> None:
    now = T0 + timedelta(days=1)
    recent = now - timedelta(minutes=5)
    await memory.add_turns(namespace, "idle", messages(4, T0))  # ended a day before `now`
    await memory.add_turns(namespace, "quiet", messages(3, recent - timedelta(minutes=2)))
    every = memory.settings.session.summarize_every_messages
    await memory.add_turns(namespace, "busy", messages(every, recent - timedelta(seconds=30 * every)))

    done = await memory.summarize_due(namespace, now=now)
    assert {s.session_id for s in done} == {"idle", "busy"}
    assert (await memory.session(namespace, "idle")).status == "closed"
    busy = await memory.session(namespace, "busy")
    assert busy.status == "open"  # summarized for growth, still going on
    assert next(s for s in done if s.session_id == "busy").outcome == "ongoing"
    assert await memory.summarize_due(namespace, now=now) == []  # nothing due any more

    await memory.add_turns(namespace, "busy", messages(every - 1, recent, offset=every))
    assert await memory.summarize_due(namespace, now=now) == []  # one short of the threshold
    await memory.add_turns(namespace, "busy", messages(1, recent + timedelta(minutes=2), offset=2 * every))
    [again] = await memory.summarize_due(namespace, now=now)
    assert again.session_id == "busy" and again.version == 2 and again.message_range == (0, 2 * every)

    later = recent + timedelta(minutes=memory.settings.session.idle_minutes + 5)
    closed = await memory.summarize_due(namespace, now=later)  # "quiet" went idle
    assert {s.session_id for s in closed} == {"quiet"}


async def test_long_session_rolls_up_windows_into_meta_and_session(memory: AsyncMemory, namespace: str) -> None:
    await memory.add_turns(namespace, "long", messages(30))
    writer = summarizer(memory, window_turns=8, rollup_fanout=2)
    top = await writer.close(namespace, "long")
    assert top is not None and top.kind == "session" and top.message_range == (0, 30)
    current = await memory.summaries(namespace, "long")
    windows_ = sorted((s for s in current if s.kind == "window"), key=lambda s: s.message_range)
    assert [s.message_range for s in windows_] == [(0, 8), (8, 16), (16, 24), (24, 30)]
    metas = [s for s in current if s.kind == "meta"]
    assert sorted(s.message_range for s in metas) == [(0, 16), (16, 30)] and all(s.level == 1 for s in metas)
    assert top.level == 2
    rows = await memory.store.read("summaries/of_session", namespace=namespace, session_id="long",
                                   include_expired=False)
    assert len(rows) == 7

    await memory.add_turns(namespace, "long", messages(4, T0 + timedelta(hours=1), offset=30))
    grown = await writer.close(namespace, "long")
    after = {s.slot: s for s in await memory.summaries(namespace, "long")}
    assert grown.version == 2 and grown.message_range == (0, 34)
    assert after["window:0"].id == windows_[0].id  # finished windows are reused, not redone
    assert after["window:24"].version == 2 and after["window:24"].message_range == (24, 32)
    assert after["window:32"].version == 1 and after["window:32"].message_range == (32, 34)


def _summary_reply(request: SeenRequest) -> Reply:
    body = request.body or {}
    text = json.dumps(body.get("messages", []))
    draft = {"text": f"Summary of a request of {estimate_tokens(text)} tokens.", "topics": ["database choice"],
             "entities": ["Maya", "TimescaleDB"], "primary_intent": "pick a database", "outcome": "success",
             "decisions": ["Use TimescaleDB."], "complexity": 0.3, "quality": 0.9}
    call = {"id": "call_1", "type": "function", "function": {"name": "SummaryDraft", "arguments": json.dumps(draft)}}
    return Reply(body={
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model", "gpt"),
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": estimate_tokens(text), "completion_tokens": 50, "total_tokens": 0},
    })


def _llm_settings(memory: AsyncMemory, fake: FakeLLM, **summaries: int) -> Settings:
    settings = memory.settings.model_copy(deep=True)
    settings.llm.services = {"fake": LLMService(provider="openai", model="gpt-fake", base_url=f"{fake.url}/v1",
                                                api_key=SecretStr("sk-test-0000000000"), timeout_s=5,
                                                transport_retries=0, max_retries=0)}
    settings.memory.indexing.backend = "fake"
    for key, value in summaries.items():
        setattr(settings.memory.summaries, key, value)
    return settings


async def test_llm_summarizer_through_the_http_endpoint_within_budget(
    memory: AsyncMemory, namespace: str, fake_llm: FakeLLM
) -> None:
    fake_llm.fallback = _summary_reply
    budget = 400
    settings = _llm_settings(memory, fake_llm, window_turns=6, rollup_fanout=3, token_budget=budget)
    chosen = summarizer_for(settings, memory.embedder)
    assert isinstance(chosen, LLMSummarizer)
    await memory.add_turns(namespace, "llm", messages(20))
    try:
        top = await SessionSummarizer(memory.store, memory.embedder, settings, chosen).close(namespace, "llm")
    finally:
        await chosen.aclose()
    assert top is not None and top.model == "gpt-fake" and top.prompt_version == "rollup-v1"
    assert top.outcome == "success" and top.decisions == ["Use TimescaleDB."] and top.quality == 0.9
    windows_ = [s for s in await memory.summaries(namespace, "llm") if s.kind == "window"]
    assert len(windows_) == 4 and all(s.prompt_version == "summarize-v1" for s in windows_)
    assert fake_llm.count("/v1/chat/completions") == 4 + 1 + 1  # windows, one meta, the session
    for request in fake_llm.requests:  # the user message (turns or part summaries) stays in budget
        user = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
        assert estimate_tokens(user) <= budget + 100  # + the fixed instructions around the turns


def test_offline_is_chosen_without_an_llm() -> None:
    settings = Settings.model_validate({"memory": {"indexing": {"backend": "offline"}}})
    assert isinstance(summarizer_for(settings, embedder=None), OfflineSummarizer)  # type: ignore[arg-type]


async def test_a_summary_vector_made_again_is_made_the_same_way(memory: AsyncMemory, namespace: str) -> None:
    """What `kg reembed` and an import without vectors run (`embed_missing`): an extractive summary's
    vector is made again of its quoted turns' vectors; when one of them is gone, its text is embedded."""
    await memory.add_turns(namespace, "again", messages(6))
    summary = await memory.close_session(namespace, "again")
    assert summary is not None
    read = ("MATCH (x:Summary {id: $id}) RETURN x.embedding AS vector, x.quoted_turns AS quoted, x.text AS text")
    [before] = await cypher_rows(memory, read, id=summary.id)
    await cypher_rows(memory, "MATCH (x:Summary {id: $id}) REMOVE x.embedding", id=summary.id)
    counts = await embed_missing(memory.store, memory.embedder, memory.settings, namespace)
    assert counts["summaries"] == 1
    [again] = await cypher_rows(memory, read, id=summary.id)
    assert again["vector"] == pytest.approx(before["vector"], abs=1e-6)

    await cypher_rows(memory, "MATCH (t:Turn {id: $id}) DETACH DELETE t", id=before["quoted"][0])
    await cypher_rows(memory, "MATCH (x:Summary {id: $id}) REMOVE x.embedding", id=summary.id)
    await embed_missing(memory.store, memory.embedder, memory.settings, namespace)
    [text] = await cypher_rows(memory, read, id=summary.id)
    assert text["vector"] == pytest.approx(memory.embedder.embed([before["text"]])[0], abs=1e-6)


async def _closed_state(memory: AsyncMemory, namespace: str) -> dict:
    """What closing left in `namespace`, without the ids and times that name the namespace or the hour."""
    sessions = await cypher_rows(memory, "MATCH (s:Session {namespace: $ns}) RETURN s.id AS id, s.status AS status, "
                                 "s.summarized_count AS count, s.summary_version AS version, s.speakers AS speakers "
                                 "ORDER BY id", ns=namespace)
    summaries = await cypher_rows(memory, "MATCH (x:Summary {namespace: $ns}) WHERE x.expired_at IS NULL "
                                  "RETURN x.session_id AS session, x.slot AS slot, x.kind AS kind, x.level AS level, "
                                  "x.version AS version, x.text AS text, x.topics AS topics, x.entities AS entities, "
                                  "x.message_range AS range, x.quoted_turns AS quoted, x.embedding AS vector, "
                                  "x.outcome AS outcome, COUNT { (x)-[:ROLLS_UP]->() } AS parts "
                                  "ORDER BY session, slot", ns=namespace)
    keys = await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.id AS id, t.session_id AS session, "
                             "t.idx AS idx, t.context_text AS text, t.follows_question AS asks, "
                             "t.context_embedding AS vector ORDER BY session, idx", ns=namespace)
    place = {row.pop("id"): (row["session"], row["idx"]) for row in keys}
    for row in summaries:
        row["vector"] = [round(x, 5) for x in row["vector"]]
        row["quoted"] = [place[t] for t in row["quoted"] or []]
    for row in keys:
        row["vector"] = [round(x, 5) for x in row["vector"]]
    return {"sessions": sessions, "summaries": summaries, "keys": keys}


async def test_a_sweep_closes_sessions_in_batches_as_closing_them_one_at_a_time_would(
    memory: AsyncMemory, namespace: str
) -> None:
    """With the offline summarizer a sweep closes several sessions per transaction (batches of about
    `[ingest] batch_size` turns; a long session's windows and rollups after its batch). The graph
    it leaves is the one the one-session pipeline leaves, key for key and summary for summary."""
    settings = memory.settings.model_copy(deep=True)
    settings.memory.summaries.window_turns = 8
    settings.memory.summaries.rollup_fanout = 2
    settings.ingest.batch_size = 20  # three or four sessions a batch
    writer = SessionSummarizer(memory.store, memory.embedder, settings,
                               OfflineSummarizer(settings.memory.summaries, memory.embedder))
    one_by_one = f"{namespace}-one"
    sessions = {f"s{i:02d}": messages(6, T0 + timedelta(hours=i), offset=i) for i in range(9)}
    sessions["long"] = messages(20, T0 + timedelta(hours=12))
    try:
        for ns in (namespace, one_by_one):
            for session_id, turns in sessions.items():
                await memory.add_turns(ns, session_id, turns)
        now = T0 + timedelta(days=2)
        for session_id in sessions:
            await writer.summarize(one_by_one, session_id, now=now, open_=False, close=True)
        with statements_counted() as reads:
            swept = await writer.due(namespace, now=now)
        assert sorted(s.session_id for s in swept) == sorted(sessions)
        # each session's turns are read once, in its batch's transaction: the long one is not read again
        # for its windows
        assert reads["sessions/index_turns"] == reads["sessions/close"] == 4, reads
        assert all(s.namespace == namespace and s.version == 1 for s in swept)
        batched, single = await _closed_state(memory, namespace), await _closed_state(memory, one_by_one)
        assert len(batched["keys"]) == 74 and all(k["text"] for k in batched["keys"])
        assert [s["count"] for s in batched["sessions"]] == [20] + [6] * 9
        assert {s["kind"] for s in batched["summaries"]} == {"session", "window", "meta"}  # the long one rolled up
        assert batched == single
        assert await writer.due(namespace, now=now) == []  # nothing due any more
    finally:
        await memory.delete_namespace(one_by_one)
