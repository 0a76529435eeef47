"""Corrections on the real Neo4j: AUDN decisions and the graph they leave, graduation, decay,
confirmation, the nightly job, measured paraphrase similarities, and a 30-session stream."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import AsyncIterator

import numpy as np
import pytest

from kg import AsyncMemory, Memory, Settings
from kg.core.models.corrections import MaintenanceReport
from kg.ingest.corrections.normalize import normalize
from tests.cypher_state import cypher_rows

T0 = datetime(2024, 3, 1, 9, tzinfo=timezone.utc)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


# Paraphrase families: each a rule stated in different words. Structural variants (the same words
# rearranged) and true paraphrases (other words) alike; their similarities are measured below.
FAMILIES: dict[str, list[str]] = {
    "uv": ["Use uv instead of pip.", "Prefer uv over pip.", "Don't use pip, use uv.", "Please use uv rather than pip.",
           "Install packages with uv, not pip.", "Use uv, not pip, for installing packages."],
    "hints": ["Add type hints to every function.", "Always include type hints in function signatures.",
              "Functions need type hints."],
    "concise": ["Keep answers short.", "Give shorter answers."],
    "british": ["Use British spelling.", "Write with British spelling, e.g. colour."],
    "pytest": ["Use pytest instead of unittest.", "Write tests with pytest, not unittest."],
    "no-emoji": ["Do not use emojis.", "Never use emojis in replies.", "Stop using emojis."],
    "tests": ["Run the tests before committing.", "Always run the tests before you commit."],
}
ONE_OFFS = ["Name the config file settings.toml.", "Answer in French for this ticket.",
            "Put the changelog entry under Unreleased.", "Use ISO dates in the report.",
            "Add docstrings to every function.", "Run the linter before committing.",
            "Wrap lines at 100 characters.", "Quote file paths with backticks."]
# A true paraphrase MiniLM scores below every threshold here (0.50-0.53 against "concise"): it is
# expected to stay a correction of its own. Kept in the stream so the figures show the miss.
HARD_PARAPHRASE = ("concise", "Your replies are too long; trim them.")
CONTRADICTIONS = {"unittest": "Use unittest instead of pytest.", "emoji": "Use emojis in your replies."}


@dataclass(frozen=True)
class Said:
    session: int
    family: str
    text: str
    confirm: bool = False


def stream() -> list[Said]:
    """30 sessions, one a day. Repeats with paraphrase, a same-session repeat, two contradictions,
    one-offs, an explicit confirmation."""
    plan: list[Said] = []
    plan += [Said(s, "uv", t) for s, t in zip((1, 4, 7, 10, 13, 16), FAMILIES["uv"])]
    plan.append(Said(4, "uv", "Use uv instead of pip!"))  # the same session again: counts once
    plan += [Said(s, "hints", t) for s, t in zip((3, 9, 15), FAMILIES["hints"])]
    plan += [Said(s, "concise", t) for s, t in zip((5, 20), FAMILIES["concise"])]
    plan += [Said(s, "british", t) for s, t in zip((8, 22), FAMILIES["british"])]
    plan += [Said(s, "pytest", t) for s, t in zip((2, 6), FAMILIES["pytest"])]
    plan.append(Said(18, "unittest", CONTRADICTIONS["unittest"]))
    plan += [Said(s, "no-emoji", t) for s, t in zip((11, 14, 17), FAMILIES["no-emoji"])]
    plan.append(Said(25, "emoji", CONTRADICTIONS["emoji"]))
    plan.append(Said(12, "tests", FAMILIES["tests"][0], confirm=True))
    plan.append(Said(27, "tests", FAMILIES["tests"][1]))
    plan.append(Said(23, *HARD_PARAPHRASE))
    plan += [Said(s, f"one-off-{i}", t) for i, (s, t) in enumerate(zip((19, 21, 24, 26, 28, 29, 30, 30), ONE_OFFS))]
    return sorted(plan, key=lambda x: x.session)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(memory={"corrections": {"clustering": {"report_dir": str(tmp_path / "reports")}}})


@pytest.fixture
async def mem(settings: Settings, memory: AsyncMemory) -> AsyncIterator[AsyncMemory]:
    """A client whose reports go to the test's folder (shares nothing with `memory` but the server)."""
    async with AsyncMemory(settings) as m:
        yield m


# -- measured similarities --------------------------------------------------------------------
def test_paraphrase_similarities_as_measured(memory: AsyncMemory) -> None:
    """The numbers the thresholds are set from (all-MiniLM-L6-v2). Printed with -s."""
    cfg = memory.settings.memory.corrections
    texts = [(f, t) for f, ts in FAMILIES.items() for t in ts] + [(f"one-off-{i}", t) for i, t in enumerate(ONE_OFFS)]
    raw = np.array(memory.embedder.embed([t for _, t in texts]))
    canon = np.array(memory.embedder.embed([normalize(t) for _, t in texts]))
    within: dict[str, list[float]] = {"raw": [], "normalized": []}
    across: dict[str, list[float]] = {"raw": [], "normalized": []}
    for i, j in itertools.combinations(range(len(texts)), 2):
        bucket = within if texts[i][0] == texts[j][0] else across
        bucket["raw"].append(float(raw[i] @ raw[j]))
        bucket["normalized"].append(float(canon[i] @ canon[j]))
    figures = {kind: {"within_min": min(within[kind]), "within_median": float(np.median(within[kind])),
                      "within_at_duplicate": float(np.mean(np.array(within[kind]) >= cfg.duplicate_similarity)),
                      "across_max": max(across[kind])} for kind in within}
    print(json.dumps(figures, indent=1))
    # Normalizing lifts paraphrases; it cannot make them all reach the ingest threshold.
    assert figures["normalized"]["within_median"] > figures["raw"]["within_median"]
    assert 0 < figures["normalized"]["within_at_duplicate"] < 1
    # Inside a cluster, merging at 0.70 never joins two different rules of this set.
    assert figures["normalized"]["across_max"] < cfg.clustering.merge_similarity
    assert figures["normalized"]["across_max"] < cfg.duplicate_similarity


# -- AUDN on the graph -----------------------------------------------------------------------
async def test_add_reinforce_noop_and_the_graph(mem: AsyncMemory, namespace: str) -> None:
    await mem.add_turns(namespace, "s1", [{"role": "user", "text": "No, use uv instead of pip.", "ts": day(1)}])
    [turn] = await mem.turns(namespace, "s1")
    first = await mem.add_correction(namespace, "s1", "Use uv instead of pip.", original_behavior="ran pip install",
                                     corrected_behavior="uv add", correction_type="tool_usage", seen_at=day(1),
                                     evidence_turn_ids=[turn.id, "t-unknown"])
    again = await mem.add_correction(namespace, "s1", "Prefer uv over pip.", seen_at=day(1.01))
    later = await mem.add_correction(namespace, "s2", "Please use uv rather than pip.", seen_at=day(3))
    assert (first.decision, first.status, first.reinforcement_count) == ("added", "correction", 1)
    assert (again.decision, again.correction_id, again.reinforcement_count) == ("noop", first.correction_id, 1)
    assert (later.decision, later.correction_id, later.status, later.reinforcement_count) == (
        "reinforced", first.correction_id, "pattern", 2)

    [node] = await cypher_rows(mem, """
        MATCH (c:Correction {id: $id})
        RETURN c.rule_text AS text, c.rule_key AS key, c.correction_type AS type, c.status AS status,
               c.reinforcement_count AS count, c.first_seen_at AS first, c.last_seen_at AS last,
               c.original_behavior AS original, size(c.embedding) AS dim,
               COLLECT { MATCH (c)-[:FROM_SESSION]->(s:Session) RETURN s.id ORDER BY s.id } AS sessions,
               COLLECT { MATCH (c)-[:EVIDENCED_BY]->(t:Turn) RETURN t.id } AS turns""", id=first.correction_id)
    assert node["text"] == "Use uv instead of pip." and node["key"] == "use uv instead of pip"
    assert (node["type"], node["status"], node["count"], node["original"]) == ("tool_usage", "pattern", 2, "ran pip install")
    assert node["first"].to_native() == day(1) and node["last"].to_native() == day(3)
    assert node["sessions"] == ["s1", "s2"] and node["turns"] == [turn.id] and node["dim"] == 384
    # "s2" did not exist: the correction created it, with the moment as its span and no turns.
    stub = await mem.session(namespace, "s2")
    assert stub is not None and stub.started_at == day(3) and stub.message_count == 0


async def test_contradiction_invalidates_and_links(mem: AsyncMemory, namespace: str) -> None:
    no = await mem.add_correction(namespace, "s1", "Do not use emojis.", seen_at=day(1))
    yes = await mem.add_correction(namespace, "s2", "Use emojis in your replies.", seen_at=day(2))
    assert (yes.decision, yes.invalidated_ids, yes.status) == ("invalidated", [no.correction_id], "correction")
    [link] = await cypher_rows(mem, """
        MATCH (n:Correction {id: $new})-[l:LINK]->(o:Correction {id: $old})
        RETURN l.type AS type, l.similarity AS sim, o.invalidated_at AS at, o.invalidated_reason AS reason,
               o.invalidated_by AS by""", new=yes.correction_id, old=no.correction_id)
    assert (link["type"], link["reason"], link["by"]) == ("contradicts", "contradicted", yes.correction_id)
    assert link["at"].to_native() == day(2) and 0.65 <= link["sim"] <= 1
    assert [c.id for c in await mem.corrections(namespace)] == [yes.correction_id]
    assert {c.id for c in await mem.corrections(namespace, include_invalidated=True)} == {
        yes.correction_id, no.correction_id}
    # Backfilled out of order: a statement older than what contradicts it is stored invalidated.
    stale = await mem.add_correction(namespace, "s0", "Never use emojis.", seen_at=day(0))
    assert stale.decision == "invalidated" and stale.invalidated_ids == [stale.correction_id]
    [view] = [c for c in await mem.corrections(namespace, include_invalidated=True) if c.id == stale.correction_id]
    assert (view.invalidated_reason, view.invalidated_by, view.weight) == ("contradicted", yes.correction_id, 0.0)


async def test_flipped_choice_supersedes_and_related_links(mem: AsyncMemory, namespace: str) -> None:
    old = await mem.add_correction(namespace, "s1", "Use pytest instead of unittest.", seen_at=day(1))
    same = await mem.add_correction(namespace, "s2", "Write tests with pytest, not unittest.", seen_at=day(2))
    assert (same.decision, same.correction_id) == ("reinforced", old.correction_id)
    short = await mem.add_correction(namespace, "s2", "Keep answers short.", seen_at=day(2))
    shorter = await mem.add_correction(namespace, "s3", "Give shorter answers.", seen_at=day(3))
    assert shorter.decision == "added" and shorter.related_ids == [short.correction_id]  # 0.85 > cosine >= 0.60
    flip = await mem.add_correction(namespace, "s3", "Use unittest instead of pytest.", seen_at=day(3))
    assert flip.decision == "invalidated" and flip.invalidated_ids == [old.correction_id]
    links = await cypher_rows(mem, "MATCH (a:Correction)-[l:LINK]->(b:Correction) WHERE a.namespace = $ns "
                                   "RETURN a.id AS a, l.type AS type, b.id AS b ORDER BY type", ns=namespace)
    assert [(r["a"], r["type"], r["b"]) for r in links] == [
        (shorter.correction_id, "related", short.correction_id), (flip.correction_id, "supersedes", old.correction_id)]


async def test_concurrent_writers_of_one_namespace_queue(mem: AsyncMemory, namespace: str) -> None:
    import asyncio

    results = await asyncio.gather(*(mem.add_correction(namespace, f"s{n}", "Use uv instead of pip.", seen_at=day(n))
                                     for n in range(6)))
    assert sorted(r.decision for r in results) == ["added"] + ["reinforced"] * 5
    [only] = await mem.corrections(namespace)
    assert (only.reinforcement_count, only.status, len(only.session_ids)) == (6, "rule", 6)


async def test_maintenance_is_idempotent(mem: AsyncMemory, namespace: str) -> None:
    for n, text in enumerate(FAMILIES["hints"]):
        await mem.add_correction(namespace, f"s{n}", text, seen_at=day(2 * n))
    first = await mem.maintain_corrections(namespace, now=day(5))
    again = await mem.maintain_corrections(namespace, now=day(5))
    assert len(first.merged) == 2 and [p.after for p in first.promoted] == ["preference"]
    assert (again.merged, again.promoted, again.demoted, again.invalidated) == ([], [], [], [])
    assert [len(c.member_ids) for c in again.clusters] == [3] and again.merged_before == 2
    [cluster] = await mem.correction_clusters(namespace)
    assert (cluster.members, cluster.reinforcement, cluster.statuses) == (1, 3, ["preference"])
    md = again.markdown_path.read_text() if again.markdown_path else ""
    assert "| 0 | 1 | 0 | 0 | 2 |" in md  # rule, preference, pattern, correction, invalidated


async def test_index_path_for_large_namespaces(settings: Settings, namespace: str) -> None:
    big = settings.model_copy(deep=True)
    big.memory.vectors.exact_max_corrections = 0  # every namespace counts as large: HNSW neighbours
    async with AsyncMemory(big) as m:
        first = await m.add_correction(namespace, "s1", "Use uv instead of pip.", seen_at=day(1))
        second = await m.add_correction(namespace, "s2", "Prefer uv over pip.", seen_at=day(2))
        assert (second.decision, second.correction_id) == ("reinforced", first.correction_id)


async def test_validation(mem: AsyncMemory, namespace: str) -> None:
    with pytest.raises(ValueError, match="correction_type"):
        await mem.add_correction(namespace, "s1", "Use uv.", correction_type="mood")
    with pytest.raises(ValueError, match="not a rule"):
        await mem.add_correction(namespace, "s1", "Please!")
    with pytest.raises(KeyError):
        await mem.confirm_rule(namespace, "cor_missing")


# -- the 30-session stream ----------------------------------------------------------------------
TOPIC = {"unittest": "pytest", "emoji": "no-emoji"}  # a contradiction is about its opponent's topic


def purity(reports: list[MaintenanceReport], family_of: dict[str, str]) -> tuple[float, int]:
    """Share of clustered corrections in a cluster whose majority topic is their own, and how many."""
    majority = total = 0
    for report in reports:
        for cluster in report.clusters:
            families = [TOPIC.get(family_of[t], family_of[t]) for t in cluster.rule_texts]
            majority += max(families.count(f) for f in set(families))
            total += len(families)
    return (majority / total if total else 1.0), total


async def test_thirty_sessions_end_with_the_expected_rules(mem: AsyncMemory, namespace: str) -> None:
    said = stream()
    family_of = {x.text: x.family for x in said}
    decisions: dict[str, int] = {}
    reports: list[MaintenanceReport] = []
    for session in range(1, 31):
        for x in (x for x in said if x.session == session):
            result = await mem.add_correction(namespace, f"session-{session:02d}", x.text, seen_at=day(session))
            decisions[result.decision] = decisions.get(result.decision, 0) + 1
            if x.confirm:
                confirmed = await mem.confirm_rule(namespace, result.correction_id, at=day(session))
                assert confirmed.status == "rule" and confirmed.confirmed_at == day(session)
        if session % 5 == 0:  # the nightly job, every fifth night
            reports.append(await mem.maintain_corrections(namespace, now=day(session + 0.5)))

    live = await mem.corrections(namespace)
    by_family: dict[str, list[str]] = {}
    for c in live:
        by_family.setdefault(family_of[c.rule_text], []).append(c.status)
    expected = {"uv": ["rule"], "tests": ["rule"], "hints": ["preference"], "concise": ["pattern", "correction"],
                "british": ["pattern"], "unittest": ["correction"], "emoji": ["correction"],
                **{f"one-off-{i}": ["correction"] for i in range(len(ONE_OFFS))}}
    assert {f: sorted(v, key=["rule", "preference", "pattern", "correction"].index) for f, v in by_family.items()} \
        == expected
    [uv] = [c for c in live if family_of[c.rule_text] == "uv"]
    assert uv.reinforcement_count == 6 and len(uv.session_ids) == 6  # session 4 said it twice: counted once

    gone = await mem.corrections(namespace, include_invalidated=True)
    invalidated = {(family_of[c.rule_text], c.invalidated_reason) for c in gone if c.invalidated_at}
    assert {(f, r) for f, r in invalidated if r != "merged"} == {("pytest", "superseded"), ("no-emoji", "contradicted")}
    assert {f for f, r in invalidated if r == "merged"} <= set(FAMILIES)  # paraphrases only, never a one-off

    core = await mem.core_rules(namespace, at=day(30.5))
    assert [family_of[c.rule_text] for c in core.rules] == ["tests", "uv"] or \
        sorted(family_of[c.rule_text] for c in core.rules) == ["tests", "uv"]
    assert [family_of[c.rule_text] for c in core.preferences] == ["hints"]
    block = core.render()
    assert block.startswith("## Rules from past corrections") and "uv" in block and "type hints" in block

    top = await mem.correction_clusters(namespace)
    assert top and family_of[top[0].representative] == "uv" and top[0].reinforcement == 6
    [row] = await cypher_rows(mem, "MATCH (k:CorrectionCluster {namespace: $ns}) RETURN count(k) AS n", ns=namespace)
    assert row["n"] == len(reports[-1].clusters)

    score, clustered = purity(reports, family_of)
    final = reports[-1]
    assert final.json_path is not None and json.loads(final.json_path.read_text())["namespace"] == namespace
    assert final.markdown_path is not None and final.markdown_path.read_text().startswith("# Corrections maintenance")
    counts = final.counts
    print(json.dumps({"decisions": decisions, "final_counts": counts, "cluster_purity": round(score, 3),
                      "clustered_points": clustered, "merges": sum(len(r.merged) for r in reports),
                      "clusters_last_run": [(c.label, len(c.member_ids)) for c in final.clusters]}, indent=1))
    assert score >= 0.9

    # A year without recurrence: decay demotes all but the confirmed rule.
    later = await mem.maintain_corrections(namespace, now=day(395))
    assert {family_of[d.rule_text] for d in later.demoted} == {"uv", "hints", "concise", "british"}
    assert later.counts["rule"] == 1 and later.counts["preference"] == later.counts["pattern"] == 0
    year = await mem.core_rules(namespace, at=day(395))
    assert [family_of[c.rule_text] for c in year.rules] == ["tests"] and year.preferences == []


async def test_clustering_groups_the_paraphrases(settings: Settings, namespace: str) -> None:
    """Every statement stored apart (ingest threshold 0.99), so only the nightly job can group them."""
    strict = settings.model_copy(deep=True)
    strict.memory.corrections.duplicate_similarity = 0.99
    texts = [(f, t) for f, ts in FAMILIES.items() for t in ts] + [HARD_PARAPHRASE] + [
        (f"one-off-{i}", t) for i, t in enumerate(ONE_OFFS)]
    family_of = {t: f for f, t in texts}
    async with AsyncMemory(strict) as m:
        for n, (_, text) in enumerate(texts):
            await m.add_correction(namespace, f"s{n:02d}", text, seen_at=day(n))
        report = await m.maintain_corrections(namespace, now=day(len(texts)))
        score, clustered = purity([report], family_of)
        stored: dict[str, int] = {}  # corrections per family (identical canonical texts were reinforced)
        for c in await m.corrections(namespace, include_invalidated=True):
            stored[family_of[c.rule_text]] = stored.get(family_of[c.rule_text], 0) + 1
        together = {f: max((sum(family_of[t] == f for t in c.rule_texts) for c in report.clusters), default=1)
                    for f in FAMILIES}
        completeness = sum(together.values()) / sum(stored[f] for f in FAMILIES)
        live = {family_of[c.rule_text] for c in await m.corrections(namespace)}
        print(json.dumps({"statements": len(texts), "corrections": sum(stored.values()),
                          "clusters": len(report.clusters), "noise": report.noise, "purity": score,
                          "clustered": clustered, "completeness": round(completeness, 3),
                          "merged": len(report.merged), "stored_per_family": stored, "largest_cluster": together,
                          "labels": [c.label for c in report.clusters]}, indent=1))
        assert score == 1.0  # no cluster mixes two rules
        # Each family in one cluster, but for the hard paraphrase, left alone (noise).
        assert all(together[f] == stored[f] - (f == HARD_PARAPHRASE[0]) for f in FAMILIES)
        assert completeness == sum(stored[f] for f in FAMILIES if f != HARD_PARAPHRASE[0]) / (
            sum(stored[f] for f in FAMILIES)) or completeness >= 0.9
        assert "concise" in live and sum(family_of[c.rule_text] == "concise" for c in await m.corrections(namespace)) == 2
        assert all(f"one-off-{i}" in live for i in range(len(ONE_OFFS)))  # nothing merged into another rule
        for merge in report.merged:
            assert family_of[merge.absorbed_text] == family_of[merge.survivor_text]


@pytest.mark.neo4j
def test_cli_rules_corrections_and_maintain(tmp_path: Path) -> None:
    ns = f"test-cli-{tmp_path.name[-8:].replace('_', '')}"
    kg = [sys.executable, "-m", "kg.cli"]
    env_dir = tmp_path / "reports"
    with Memory() as memory:
        try:
            for n, text in enumerate(["Use uv instead of pip.", "Prefer uv over pip.", "Don't use pip, use uv.",
                                      "Please use uv rather than pip.", "Always use uv instead of pip."]):
                memory.add_correction(ns, f"s{n}", text, seen_at=datetime.now(timezone.utc) - timedelta(days=5 - n))
            memory.add_correction(ns, "s9", "Answer in French for this ticket.")
            rules = subprocess.run([*kg, "rules", "-n", ns], capture_output=True, text=True)
            assert rules.returncode == 0, rules.stderr
            assert "## Rules from past corrections" in rules.stdout and "Use uv instead of pip." in rules.stdout
            listed = subprocess.run([*kg, "corrections", "-n", ns], capture_output=True, text=True)
            assert listed.returncode == 0 and "rule" in listed.stdout and "French" in listed.stdout
            env = {**__import__("os").environ, "KG_MEMORY__CORRECTIONS__CLUSTERING__REPORT_DIR": str(env_dir)}
            job = subprocess.run([*kg, "corrections", "maintain", "-n", ns], capture_output=True, text=True, env=env)
            assert job.returncode == 0, job.stderr
            assert "# Corrections maintenance" in job.stdout and list(env_dir.glob("corrections-*.json"))
        finally:
            memory.delete_namespace(ns)


async def test_correction_vector_index_follows_the_embedder(memory: AsyncMemory) -> None:
    [row] = await cypher_rows(memory, "SHOW VECTOR INDEXES YIELD name, state, labelsOrTypes, properties, options "
                                      "WHERE name = 'correction_embedding' RETURN state, labelsOrTypes AS labels, "
                                      "properties, options")
    # on a server that filters inside vector indexes the index carries the namespace (Cypher 25 SEARCH)
    carried = ["embedding", "namespace"] if memory.store.capabilities.path == "cypher25" else ["embedding"]
    assert (row["state"], row["labels"], row["properties"]) == ("ONLINE", ["Correction"], carried)
    config = row["options"]["indexConfig"]
    assert config["vector.dimensions"] == memory.embedder.dim and config["vector.similarity_function"] == "COSINE"
