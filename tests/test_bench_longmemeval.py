"""`bench.longmemeval`, the benchmark issue 32 is judged by: its scoring, its stratified order, and a
whole run on a small haystack in the release's format, through the public API and the HTTP door."""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path

import pytest

from bench import longmemeval as lme
from kg import AsyncMemory

FILLER = [
    ("user", "Can you suggest a weekly meal plan with more vegetables?"),
    ("assistant", "Here is a plan: lentil soup on Monday, roasted vegetables on Tuesday, a stir fry on "
                  "Wednesday and a big salad with chickpeas on Thursday. " * 3),
    ("user", "How do I keep basil fresh for longer?"),
    ("assistant", "Trim the stems and keep it in a glass of water on the counter, away from the sun."),
    ("user", "What is a good stretch after running?"),
    ("assistant", "A standing quad stretch and a calf stretch against a wall, thirty seconds each side."),
]


def _question(qid: str, qtype: str, evidence: str, question: str) -> dict:
    """Five sessions a day apart; the third holds the evidence turn (the user's), the rest filler."""
    sessions, dates, ids = [], [], []
    for i in range(5):
        turns = [{"role": role, "content": text} for role, text in FILLER]
        if i == 2:
            turns[2] = {"role": "user", "content": evidence, "has_answer": True}
        sessions.append(turns)
        dates.append(f"2023/05/{20 + i:02d} (Sat) 10:00")
        ids.append(f"{qid}_s{i}" if i != 2 else f"answer_{qid}")
    return {"question_id": qid, "question_type": qtype, "question": question, "answer": "-",
            "question_date": "2023/05/30 (Tue) 09:00", "haystack_session_ids": ids,
            "haystack_dates": dates, "haystack_sessions": sessions, "answer_session_ids": [f"answer_{qid}"]}


def _questions(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture
def haystack(tmp_path: Path) -> Path:
    questions = [
        _question("q1", "single-session-user", "I adopted a grey kitten called Pistachio from the shelter.",
                  "What is the name of the kitten I adopted?"),
        _question("q2", "knowledge-update", "My commute to the observatory takes forty minutes by tram.",
                  "How long is my commute to the observatory?"),
        _question("q3", "single-session-user", "I keep my passport in the blue tin under the piano.",
                  "Where do I keep my passport?"),
    ]
    path = tmp_path / "lme.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(questions, fh)
    return path


def test_scores_count_evidence_in_the_top_turns_and_sessions() -> None:
    found_turns = [f"t{i}" for i in range(12)]
    got = lme.scores(found_turns, ["a", "b", "c", "d", "e", "f"], {"t0", "t9", "t10"}, {"b", "f"})
    assert got["turn_recall@10"] == pytest.approx(2 / 3)  # t10 is 11th
    assert got["turn_hit@10"] == 1.0
    assert got["session_recall_any@5"] == 1.0 and got["session_recall_all@5"] == 0.0  # f is 6th
    assert lme.scores([], [], {"t1"}, {"a"})["turn_recall@10"] == 0.0


def test_a_prefix_keeps_the_mix_of_types_and_repeated_sessions_get_their_own_ids() -> None:
    qs = [{"question_type": t, "question_id": f"{t}{i}"} for t in ("b", "a") for i in range(3)]
    assert [q["question_id"] for q in lme.stratified(qs, 4)] == ["a0", "b0", "a1", "b1"]
    assert lme.session_ids({"haystack_session_ids": ["x", "y", "x"]}) == ["x", "y", "x~2"]


async def test_a_run_scores_both_phases_and_the_http_door_and_keep_reuses_the_namespaces(
        haystack: Path, memory: AsyncMemory) -> None:
    prefix = f"t-lme-{uuid.uuid4().hex[:8]}"
    try:
        first = await lme.run(haystack, None, keep=True, prefix=prefix, http=True, rows=True)
        assert first["questions"] == 3
        for phase in lme.PHASES:
            for retriever in ("product", "bm25"):
                table = first["metrics"][phase][retriever]
                assert table["all"]["n"] == 3
                assert table["all"]["turn_recall@10"] == 1.0  # each evidence turn's words are its own
                assert set(table["by_type"]) == {"knowledge-update", "single-session-user"}
        assert first["http"]["all"] == first["metrics"]["after"]["product"]["all"]  # the door ranks alike
        costs = first["costs"]
        assert costs["sessions_closed"] == 15
        assert costs["first_search_after_write_ms"]["n"] == 6  # after each ingest and each closing
        assert costs["first_search_of_kept_namespace_ms"]["n"] == 0 and costs["warm_search_ms"]["n"] == 6
        assert first["questions_without_before"] == 0
        assert costs["close_s_per_10_turns_p50"] > 0 and costs["ingest_turns_per_s"] > 0
        assert len(first["rows"]) == 3 * 2 * 2  # questions x phases x retrievers
        assert {r["question"] for r in first["rows"]} == {"q1", "q2", "q3"}

        q1 = _questions(haystack)[0]
        stored = [len(await memory.turns(f"{prefix}-q1", sid)) for sid in lme.session_ids(q1)]
        assert stored == [len(FILLER)] * 5
        again = await lme.run(haystack, None, keep=True, prefix=prefix, http=False)
        assert again["costs"]["sessions_closed"] == 0  # all closed already: nothing closed twice
        assert again["costs"]["ingest_turns_per_s"] is None  # nothing written twice
        assert "rows" not in again and "http" not in again
        assert again["metrics"]["after"] == first["metrics"]["after"]
        # closed already: no before phase to score, and each namespace's first search is timed apart
        assert "before" not in again["metrics"] and again["questions_without_before"] == 3
        assert again["costs"]["first_search_after_write_ms"]["n"] == 0
        assert again["costs"]["first_search_of_kept_namespace_ms"]["n"] == 3
        assert again["costs"]["warm_search_ms"]["n"] == 3
        assert [len(await memory.turns(f"{prefix}-q1", sid)) for sid in lme.session_ids(q1)] == stored
    finally:
        for qid in ("q1", "q2", "q3"):
            await memory.delete_namespace(f"{prefix}-{qid}")


async def test_without_keep_the_namespaces_are_removed(haystack: Path, memory: AsyncMemory) -> None:
    prefix = f"t-lme-{uuid.uuid4().hex[:8]}"
    await lme.run(haystack, 1, keep=False, prefix=prefix, http=False)
    first = lme.stratified(_questions(haystack), 1)[0]
    assert await memory.session(f"{prefix}-{first['question_id']}", lme.session_ids(first)[0]) is None
