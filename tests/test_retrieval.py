"""Retrieval: RRF and the other pure pieces, then every recipe, two-stage sessions, the boosts and
recall (turns, facts, summaries with one score) against the real Neo4j."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from kg import AsyncMemory
from kg.core.settings.memory import VectorSearchSettings
from kg.core.store.capabilities import Capabilities
from kg.queries.analysis import named, time_window
from kg.queries.candidates import index_fetch, overfetch
from kg.queries.fusion import best_per_group, group_scores, normalized, ranking, rrf
from kg.queries.recall import query_keys
from kg.queries.recipes import BM25, FLAT, HIERARCHICAL, HYBRID, RECIPES, recipe
from kg.queries.retrieve import Retriever
from tests.transcripts import transcript

NOW = datetime(2025, 7, 1, 12, 0, tzinfo=timezone.utc)


# -- pure -------------------------------------------------------------------------------------
def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    scores = rrf([["a", "b", "c"], ["b", "a"], ["c"]], k=10)
    assert scores["a"] == pytest.approx(1 / 11 + 1 / 12)
    assert scores["b"] == pytest.approx(1 / 12 + 1 / 11)
    assert scores["c"] == pytest.approx(1 / 13 + 1 / 11)
    assert ranking(scores) == ["a", "b", "c"]  # a and b tie (broken by name), c ranked lower once
    weighted = rrf([["a"], ["b"]], k=10, weights=[2.0, 1.0])
    assert weighted["a"] == pytest.approx(2 * weighted["b"])
    assert "b" not in rrf([["a"], ["b"]], k=10, weights=[1.0, 0.0])
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1.0, 2.0])


def test_group_scores_and_best_per_group() -> None:
    scores = {"t1": 1.0, "t2": 0.9, "t3": 0.8, "t4": 0.95}
    group = {"t1": "s1", "t2": "s2", "t3": "s2", "t4": "s3"}
    grouped = group_scores(scores, group, top=2, decay=0.5)
    assert grouped == pytest.approx({"s1": 1.0, "s2": 0.9 + 0.4, "s3": 0.95})
    assert best_per_group(scores, group, ["s2", "s1"], per_group=1) == ["t1", "t2"]
    assert normalized({"a": 2.0, "b": 1.0}) == {"a": 1.0, "b": 0.5}


@pytest.mark.parametrize("query, start, days", [
    ("What did Melanie paint on 8 May, 2023?", datetime(2023, 5, 8, tzinfo=timezone.utc), 1),
    ("What happened on October 13, 2023?", datetime(2023, 10, 13, tzinfo=timezone.utc), 1),
    ("What did we plan in June 2024?", datetime(2024, 6, 1, tzinfo=timezone.utc), 30),
    ("Where did she travel in 2022?", datetime(2022, 1, 1, tzinfo=timezone.utc), 365),
    ("What did I say yesterday?", datetime(2025, 6, 30, tzinfo=timezone.utc), 1),
    ("What did we pick last May?", datetime(2025, 5, 1, tzinfo=timezone.utc), 31),
    ("What did we discuss last week?", datetime(2025, 6, 23, tzinfo=timezone.utc), 7),
    # a month without its year: the latest one up to now, this one included
    ("Which events did I watch in January?", datetime(2025, 1, 1, tzinfo=timezone.utc), 31),
    ("What did I order during July?", datetime(2025, 7, 1, tzinfo=timezone.utc), 31),  # this month
    ("Where did we travel in August?", datetime(2024, 8, 1, tzinfo=timezone.utc), 31),  # last year's
    ("How many runs did I miss in June?", datetime(2025, 6, 1, tzinfo=timezone.utc), 30),
])
def test_time_expressions(query: str, start: datetime, days: int) -> None:
    window = time_window(query, NOW)
    assert window is not None and window.start == start and (window.end - window.start).days == days


def test_no_time_expression_and_names() -> None:
    assert time_window("two weeks after the race, what did she do?", NOW) is None
    assert time_window("What database did we pick?", NOW) is None
    assert time_window("What may I bring in May 2024?", NOW).start == datetime(2024, 5, 1, tzinfo=timezone.utc)
    assert named("What did Caroline tell Mel?", ["Caroline", "Melanie", "Mel"]) == {"Caroline", "Mel"}
    assert {"maya", "timescaledb", "maya use"} <= set(query_keys("Does Maya use TimescaleDB?"))


def test_index_overfetch_follows_the_namespace_share() -> None:
    assert overfetch(50, 100_000, 100_000) == 60  # the whole index: a fifth more
    assert overfetch(50, 10_000, 100_000) == 600  # a tenth of it: ten times that
    assert overfetch(50, 1_000, 1_000_000) == 1000  # capped
    assert overfetch(50, 0, 0) == 60 and overfetch(50, 100, 100, floor=100) == 100


def test_the_index_is_asked_by_depth_where_it_filters_by_tenant_else_by_share() -> None:
    """A tenant-filtered index (2026.02+) is asked for `index_overfetch_turns` times the depth (a wider
    HNSW candidate list); a global one (5.26) for enough that the depth falls in the namespace."""
    class Server:
        def __init__(self, version: str, cypher: tuple[str, ...]) -> None:
            self.capabilities = Capabilities(version, "community", cypher)

    policy = VectorSearchSettings()
    filtering, lts = Server("2026.08.1", ("5", "25")), Server("5.26.30", ("5",))
    assert index_fetch(filtering, policy, 50, 10_000, 1_000_000) == 100  # type: ignore[arg-type]
    assert index_fetch(filtering, VectorSearchSettings(index_overfetch_turns=3), 50, 10, 10) == 150  # type: ignore[arg-type]
    assert index_fetch(lts, policy, 50, 10_000, 100_000) == 600  # type: ignore[arg-type]
    assert index_fetch(Server("2026.01.0", ("5", "25")), policy, 50, 10_000, 100_000) == 600  # type: ignore[arg-type]


def test_recipes_are_frozen_and_copied() -> None:
    assert set(RECIPES) == {"flat", "bm25", "hybrid", "hierarchical"}
    with pytest.raises(ValidationError):
        HIERARCHICAL.sessions = 3  # type: ignore[misc]
    narrow = recipe("hierarchical", sessions=3, turns_per_session=2)
    assert (narrow.sessions, narrow.turns_per_session) == (3, 2) and HIERARCHICAL.sessions == 10
    assert recipe(HYBRID) is HYBRID
    with pytest.raises(ValueError):
        recipe("nope")


# -- on the graph -------------------------------------------------------------------------------
SESSIONS = {
    "s-db": (datetime(2025, 3, 3, 9, tzinfo=timezone.utc), transcript("""
        Maya: We need a time-series database for the sensor project.
        Bot: TimescaleDB and InfluxDB both fit; TimescaleDB keeps SQL and Postgres tooling.
        Maya: Let's go with TimescaleDB then, our team knows Postgres.
        Bot: Good choice. I will draft the hypertable schema for the sensor readings.
    """)),
    "s-trip": (datetime(2025, 4, 2, 18, tzinfo=timezone.utc), transcript("""
        Maya: I booked a ryokan in Kyoto for the cherry blossom week.
        Bot: Lovely. The Philosopher's Path is best early in the morning.
        Maya: Who should I ask about the train passes?
        Bot: The JR office at Kansai airport sells them, bring your passport.
    """)),
    "s-run-may": (datetime(2025, 5, 8, 7, tzinfo=timezone.utc), transcript("""
        Maya: My morning run along the river felt heavy today.
        Bot: Try an easier pace for the next runs.
    """)),
    "s-run-june": (datetime(2025, 6, 20, 7, tzinfo=timezone.utc), transcript("""
        Maya: My morning run along the river felt light today.
        Bot: Great, keep the pace steady on your runs.
    """)),
    "s-garden": (datetime(2025, 6, 25, 17, tzinfo=timezone.utc), transcript("""
        Ravi: I grow cherry tomatoes and basil on the balcony.
        Maya: I grow tomatoes too, mostly in pots.
        Ravi: Who fixed the leaking balcony drain?
        Maya: My neighbour Tomasz did, last Sunday.
    """)),
}


@pytest.fixture
async def conversations(memory: AsyncMemory, namespace: str) -> str:
    for sid, (start, lines) in SESSIONS.items():
        await memory.add_turns(namespace, sid, [
            {"role": role, "speaker": speaker, "text": text, "ts": start + timedelta(seconds=40 * i)}
            for i, (role, speaker, text) in enumerate(lines)])
    await memory.summarize_due(namespace, now=NOW)  # all idle: closed, summarized, context keys set
    return namespace


@pytest.mark.parametrize("name", ["flat", "bm25", "hybrid", "hierarchical"])
async def test_each_recipe_finds_the_decision(memory: AsyncMemory, conversations: str, name: str) -> None:
    hits = await memory.retrieve(conversations, "which time-series database did we choose for the sensors?",
                                 k=3, recipe=name)
    assert hits and all(h.recipe == name for h in hits)
    assert hits[0].turn.session_id == "s-db"
    assert hits == sorted(hits, key=lambda h: -h.score)


async def test_hierarchical_ranks_sessions_then_turns(memory: AsyncMemory, conversations: str) -> None:
    narrow = recipe("hierarchical", sessions=1, turns_per_session=2)
    hits = await memory.retrieve(conversations, "Kyoto trip train passes", k=5, recipe=narrow)
    assert [h.turn.session_id for h in hits] == ["s-trip", "s-trip"]  # S=1 session, T=2 turns
    arcs = await memory.search_sessions(conversations, "what did we discuss about the Kyoto trip?", k=2)
    assert arcs[0].session.id == "s-trip" and arcs[0].summary is not None
    assert arcs[0].summary.kind == "session" and arcs[0].turns and arcs[0].turns[0].turn.session_id == "s-trip"


@pytest.mark.parametrize("exact_max_turns", [3000, 0])  # exact scans, then the indexes
async def test_summary_lists_add_their_weight_to_stage_one(
    memory: AsyncMemory, conversations: str, exact_max_turns: int
) -> None:
    settings = memory.settings.memory.retrieval
    retriever = Retriever(memory.store, memory.embedder, settings, vector_search=_exact_max_turns(exact_max_turns))
    query = "the ryokan in Kyoto for the cherry blossom week"

    async def trip_score(text: float, dense: float) -> float:
        chosen = HIERARCHICAL.model_copy(update={"summary_text_weight": text, "summary_vector_weight": dense})
        return dict((await retriever.search(conversations, query, 3, chosen)).sessions)["s-trip"]

    first_rank = 1 / (HIERARCHICAL.rrf_k + 1)  # the trip's summary leads both summary lists
    without = await trip_score(0.0, 0.0)
    assert await trip_score(1.0, 0.0) == pytest.approx(without + first_rank)
    assert await trip_score(0.0, 1.0) == pytest.approx(without + first_rank)
    assert await trip_score(0.5, 2.0) == pytest.approx(without + 2.5 * first_rank)


async def test_time_expression_boosts_its_session(memory: AsyncMemory, conversations: str) -> None:
    for name in ("hybrid", "hierarchical"):
        may = await memory.retrieve(conversations, "How did Maya's morning run feel on 8 May, 2025?", k=2, recipe=name)
        june = await memory.retrieve(conversations, "How did Maya's morning run feel on June 20, 2025?", k=2, recipe=name)
        assert may[0].turn.session_id == "s-run-may" and june[0].turn.session_id == "s-run-june"


async def test_named_speaker_and_answer_after_question(memory: AsyncMemory, conversations: str) -> None:
    ravi = await memory.retrieve(conversations, "What does Ravi grow?", k=1, recipe="hybrid")
    assert ravi[0].turn.speaker == "Ravi"
    fixed = await memory.retrieve(conversations, "who fixed the leaking balcony drain", k=2, recipe="hybrid")
    assert "Tomasz" in " ".join(h.turn.text for h in fixed)


async def test_large_namespace_path_uses_the_index_and_exact_stage_two(
    memory: AsyncMemory, conversations: str
) -> None:
    retriever = Retriever(memory.store, memory.embedder, memory.settings.memory.retrieval,
                          vector_search=_exact_max_turns(0))
    found = await retriever.search(conversations, "which database did we choose?", 3, HIERARCHICAL)
    assert found.turns and found.candidates[found.turns[0][0]].session_id == "s-db"
    ravi = await retriever.search(conversations, "What does Ravi grow on the balcony?", 3, HIERARCHICAL)
    assert found.turns and ravi.candidates[ravi.turns[0][0]].speaker == "Ravi"  # boosts after the exact redo
    flat = await retriever.search(conversations, "which database did we choose?", 3, FLAT)
    assert flat.turns  # the HNSW path, over-fetched and kept to the namespace
    assert (await retriever.search(conversations, "???", 3, BM25)).turns == []  # nothing to search for


async def test_as_of_hides_later_turns(memory: AsyncMemory, conversations: str) -> None:
    hits = await memory.retrieve(conversations, "tomatoes on the balcony", k=5, recipe="hybrid",
                                 as_of=datetime(2025, 6, 1, tzinfo=timezone.utc))
    assert all(h.turn.ts <= datetime(2025, 6, 1, tzinfo=timezone.utc) for h in hits)
    assert "s-garden" not in {h.turn.session_id for h in hits}


async def test_recall_weighs_similarity_graph_and_confidence(memory: AsyncMemory, conversations: str) -> None:
    ns = conversations
    trip = await memory.turns(ns, "s-trip")
    await memory.remember(ns, "Maya", "lives_in", "Lisbon", valid_from=datetime(2024, 1, 1, tzinfo=timezone.utc),
                          evidence_turn_ids=[trip[0].id], object_type="place")
    await memory.remember(ns, "Maya", "lives_in", "Porto", valid_from=datetime(2025, 2, 1, tzinfo=timezone.utc),
                          object_type="place")
    hits = await memory.recall(ns, "Where does Maya live now?", k=10)
    facts = [h for h in hits if h.kind == "fact"]
    assert [f.fact.object_value for f in facts] == ["Porto"]  # the superseded Lisbon never appears
    porto = facts[0]
    assert porto.graph == 1.0 and 0 < porto.confidence <= 1.5 and 0 <= porto.similarity <= 1
    w = memory.settings.memory.retrieval.recall
    assert porto.score == pytest.approx(w.similarity * porto.similarity + w.graph * porto.graph
                                        + w.confidence * porto.confidence)
    assert {h.kind for h in hits} >= {"turn", "fact"} and hits == sorted(hits, key=lambda h: -h.score)

    before = await memory.recall(ns, "Where does Maya live?", k=10, as_of=datetime(2024, 6, 1, tzinfo=timezone.utc))
    assert [h.fact.object_value for h in before if h.kind == "fact"] == ["Lisbon"]

    summaries = [h for h in await memory.recall(ns, "Kyoto cherry blossom trip", k=10) if h.kind == "summary"]
    assert summaries and summaries[0].session_id == "s-trip" and summaries[0].summary.expired_at is None

    memories = await memory.search_memories(ns, "Where does Maya live?", k=5)
    assert {h.kind for h in memories} <= {"turn", "fact"} and any(h.kind == "fact" for h in memories)


async def test_stage_one_sessions_are_heard_before_stage_two(memory: AsyncMemory, conversations: str) -> None:
    heard: list[list[str]] = []
    for policy in (_exact_max_turns(3000), _exact_max_turns(0)):  # exact path, and the index path with a stage-2 redo
        heard.clear()
        found = await Retriever(memory.store, memory.embedder, memory.settings.memory.retrieval,
                                vector_search=policy).search(
            conversations, "Kyoto trip train passes", 5, HIERARCHICAL, on_sessions=heard.append)
        assert heard == [[s for s, _ in found.sessions]] and heard[0][0] == "s-trip"
    heard.clear()
    await Retriever(memory.store, memory.embedder, memory.settings.memory.retrieval).search(
        conversations, "Kyoto", 5, HYBRID, on_sessions=heard.append)
    assert heard == []  # single-stage recipes have no stage 1


def _exact_max_turns(size: int) -> VectorSearchSettings:
    return VectorSearchSettings(exact_max_turns=size)
