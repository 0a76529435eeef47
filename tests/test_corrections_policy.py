"""Corrections without a database: normalization, conflict shapes, the AUDN policy, a judge's
verdict, weight, graduation and decay, and the clustering stages over hand-made vectors."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kg.core.models.correction_weight import (
    CorrectionState,
    earned_status,
    effective_weight,
    held_status,
    status_at,
    weight_at,
)
from kg.core.models.corrections import CoreRules, CorrectionView
from kg.core.settings.memory import CorrectionClusteringSettings, CorrectionSettings
from kg.ingest.corrections.clustering import Member, cluster_labels, contradictions, keyphrases, merges
from kg.ingest.corrections.normalize import conflict, normalize, shape
from kg.ingest.corrections.policy import Candidate, Neighbour, Verdict, decide, plan_from_verdict

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
CFG = CorrectionSettings()


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


# -- normalization and shapes ---------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Use uv instead of pip.", "Prefer uv over pip.", "Don't use pip, use uv.", "Please use uv rather than pip!",
    "Always use uv instead of pip", "From now on, use uv in place of pip.",
])
def test_surface_variants_share_one_canonical_text(text: str) -> None:
    assert normalize(text) == "use uv instead of pip"


@pytest.mark.parametrize("text, key", [
    ("Never use emojis.", "do not use emojis"),
    ("Stop using emojis!", "do not use emojis"),
    ("Avoid emojis in commit messages.", "do not emojis in commit messages"),
    ("Install packages with uv, not pip.", "install packages with uv instead of pip"),
    ("Use British spelling (e.g. colour).", "use british spelling"),
    ("Name the config file settings.toml.", "name the config file settings.toml"),
    ("Make sure to run the tests before you commit.", "run the tests before you commit"),
])
def test_normalize(text: str, key: str) -> None:
    assert normalize(text) == key


@pytest.mark.parametrize("old, new, expected", [
    ("Use pytest instead of unittest.", "Use unittest instead of pytest.", "supersedes"),
    ("Use tabs for indentation.", "Use spaces instead of tabs for indentation.", "supersedes"),
    ("Do not use emojis.", "Use emojis.", "contradicts"),
    ("Never use emojis in replies.", "Use emojis.", "contradicts"),
    ("Use uv instead of pip.", "Don't use uv.", "contradicts"),
    ("Use uv instead of pip.", "Don't use pip.", None),  # agrees
    ("Use uv instead of pip.", "Install packages with uv, not pip.", None),
    ("Run the tests before committing.", "Run the linter before committing.", None),
    ("Keep answers short.", "Use British spelling.", None),
])
def test_conflict_shapes(old: str, new: str, expected: str | None) -> None:
    assert conflict(shape(normalize(new)), shape(normalize(old))) == expected


# -- the AUDN policy ----------------------------------------------------------------------------
def candidate(text: str, session: str = "s9", at: float = 10) -> Candidate:
    return Candidate(text, normalize(text), session, day(at), "preference")


def neighbour(cid: str, text: str, sim: float, last_seen: float = 5, in_session: bool = False, count: int = 1
              ) -> Neighbour:
    return Neighbour(cid, normalize(text), text, sim, day(last_seen), in_session, count)


def test_policy_adds_when_nothing_is_close() -> None:
    plan = decide(candidate("Use uv instead of pip."), [neighbour("a", "Keep answers short.", 0.62)], CFG)
    assert (plan.decision, plan.creates, plan.related) == ("added", True, (("a", 0.62),))


def test_policy_reinforces_the_most_similar_duplicate() -> None:
    plan = decide(candidate("Prefer uv over pip."), [neighbour("a", "Use uv instead of pip.", 0.99),
                                                     neighbour("b", "Use uv instead of pip please", 0.9)], CFG)
    assert (plan.decision, plan.target_id, plan.invalidate) == ("reinforced", "a", ())


def test_policy_same_session_counts_once() -> None:
    plan = decide(candidate("Prefer uv over pip."), [neighbour("a", "Use uv instead of pip.", 1.0, in_session=True)],
                  CFG)
    assert (plan.decision, plan.target_id) == ("noop", "a")


def test_policy_below_threshold_adds_with_a_related_link() -> None:
    plan = decide(candidate("Give shorter answers."), [neighbour("a", "Keep answers short.", 0.72)], CFG)
    assert (plan.decision, plan.related) == ("added", (("a", 0.72),))


def test_policy_invalidates_an_older_contradiction() -> None:
    plan = decide(candidate("Use emojis."), [neighbour("a", "Do not use emojis.", 0.91, last_seen=5)], CFG)
    assert plan.decision == "invalidated" and plan.creates
    assert [(c.id, c.type) for c in plan.invalidate] == [("a", "contradicts")]


def test_policy_flipped_choice_supersedes() -> None:
    plan = decide(candidate("Use unittest instead of pytest."),
                  [neighbour("a", "Use pytest instead of unittest.", 0.99, count=3)], CFG)
    assert [(c.id, c.type) for c in plan.invalidate] == [("a", "supersedes")] and plan.creates


def test_policy_stale_statement_loses_to_a_later_one() -> None:
    plan = decide(candidate("Use emojis.", at=3), [neighbour("a", "Do not use emojis.", 0.91, last_seen=5)], CFG)
    assert plan.decision == "invalidated" and plan.creates and plan.invalidate == ()
    assert [c.id for c in plan.stale_against] == ["a"]


def test_policy_ignores_conflicts_below_the_contradiction_threshold() -> None:
    plan = decide(candidate("Use emojis."), [neighbour("a", "Do not use emojis.", 0.5)], CFG)
    assert plan.decision == "added" and plan.invalidate == ()


def test_judge_verdicts_become_the_same_plans() -> None:
    near = [neighbour("a", "Use uv instead of pip.", 0.8), neighbour("b", "Do not use uv", 0.7, in_session=True)]
    plan = plan_from_verdict(Verdict("reinforce", target_id="a"), candidate("uv, not pip"), near, "llm")
    assert plan is not None and (plan.decision, plan.target_id, plan.decided_by) == ("reinforced", "a", "llm")
    same_session = plan_from_verdict(Verdict("reinforce", target_id="b"), candidate("x"), near, "llm")
    assert same_session is not None and same_session.decision == "noop"
    wins = plan_from_verdict(Verdict("invalidate", invalidate=(("b", "contradicts"),)), candidate("x"), near, "llm")
    assert wins is not None and wins.creates and wins.decision == "invalidated"
    assert plan_from_verdict(Verdict("reinforce", target_id="zzz"), candidate("x"), near, "llm") is None
    assert plan_from_verdict(Verdict("invalidate"), candidate("x"), near, "llm") is None


# -- weight, graduation, decay --------------------------------------------------------------------
def test_effective_weight_formula() -> None:
    assert effective_weight(0.6, 1, 0, 120, 0.5) == pytest.approx(0.6)
    assert effective_weight(0.6, 4, 0, 120, 0.5) == pytest.approx(1.2)
    assert effective_weight(0.6, 4, 120, 120, 0.5) == pytest.approx(0.6)  # a true half-life
    assert effective_weight(1.0, 1, 30, 60, 0.0) == pytest.approx(math.exp(-30 * math.log(2) / 60))
    with pytest.raises(ValueError):
        effective_weight(1.0, 1, 1, 0, 0.5)


def state(count: int, first: float = 0, last: float = 0, confirmed: bool = False, confidence: float = 0.6,
          half_life: float = 120) -> CorrectionState:
    return CorrectionState(confidence, count, day(first), day(last), half_life, confirmed)


def test_graduation_thresholds() -> None:
    assert earned_status(state(1), CFG) == "correction"
    assert earned_status(state(2, 0, 1), CFG) == "pattern"
    assert earned_status(state(3, 0, 0.5), CFG) == "pattern"  # three sessions in one burst: not yet consistent
    assert earned_status(state(3, 0, 2), CFG) == "preference"
    assert earned_status(state(5, 0, 0), CFG) == "rule"
    assert earned_status(state(1, confirmed=True), CFG) == "rule"


def test_decay_demotes_one_floor_at_a_time() -> None:
    rule = state(5, 0, 10)  # weight 0.6 * sqrt(5) = 1.34 when last seen
    assert status_at(rule, day(10), CFG) == "rule"
    assert held_status(weight_at(rule, day(140), CFG), CFG) == "rule"  # below 0.6 after 139 days
    demoted = [status_at(rule, day(d), CFG) for d in (140, 180, 250, 310)]
    assert demoted == ["rule", "preference", "pattern", "correction"]
    confirmed = state(1, 0, 0, confirmed=True, confidence=1.0, half_life=365)
    assert status_at(confirmed, day(200), CFG) == "rule" and status_at(confirmed, day(300), CFG) == "preference"


def test_render_core_rules() -> None:
    def view(text: str, status: str, weight: float) -> CorrectionView:
        return CorrectionView(id=text, namespace="n", correction_type="preference", rule_text=text, rule_key=text,
                              confidence=0.6, reinforcement_count=5, half_life_days=120, first_seen_at=T0,
                              last_seen_at=T0, status=status, weight=weight)  # type: ignore[arg-type]
    core = CoreRules(namespace="n", at=T0, rules=[view("Use uv instead of pip", "rule", 1.3)],
                     preferences=[view("Add type hints.", "preference", 0.9)])
    assert core.render() == ("## Rules from past corrections\n\nAlways follow these:\n- Use uv instead of pip.\n\n"
                             "Strong preferences:\n- Add type hints.\n")
    assert CoreRules(namespace="n", at=T0, rules=[], preferences=[]).render() == ""


# -- clustering stages ---------------------------------------------------------------------------
def unit(*xs: float) -> list[float]:
    v = np.array(xs, dtype=np.float32)
    return list(v / np.linalg.norm(v))


def member(cid: str, text: str, count: int = 1, last: float = 0, confirmed: bool = False) -> Member:
    return Member(cid, normalize(text), text, count, 0.0, last, confirmed)


def test_hdbscan_groups_dense_points_and_leaves_outliers() -> None:
    vectors = np.array([unit(1, 0.05, 0), unit(1, 0, 0.05), unit(1, 0.04, 0.04),
                        unit(0, 1, 0.05), unit(0.05, 1, 0), unit(0, 0, 1)], dtype=np.float32)
    labels, reduced = cluster_labels(vectors, CorrectionClusteringSettings())
    assert not reduced
    assert labels[0] == labels[1] == labels[2] != labels[3] == labels[4] and labels[0] >= 0 and labels[3] >= 0
    assert cluster_labels(vectors[:1], CorrectionClusteringSettings()) == ([-1], False)


def test_large_sets_are_reduced_with_umap_first() -> None:
    """About 20 s on two cores, mostly numba compiling UMAP: the only test of that path."""
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(3, 384))
    vectors = np.concatenate([c + 0.15 * rng.normal(size=(25, 384)) for c in centers]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels, reduced = cluster_labels(vectors, CorrectionClusteringSettings(umap_min_points=50, link_similarity=0.5))
    assert reduced
    groups = [set(labels[i * 25:(i + 1) * 25]) for i in range(3)]
    assert all(len(g) == 1 and -1 not in g for g in groups) and len(set.union(*groups)) == 3


def test_merges_fold_into_the_most_reinforced_but_never_across_a_conflict() -> None:
    members = [member("a", "Use uv instead of pip.", 1), member("b", "Install packages with uv, not pip.", 4),
               member("c", "Don't use uv.", 1), member("d", "Keep answers short.", 1)]
    sims = np.array([[1, .9, .8, .1], [.9, 1, .75, .1], [.8, .75, 1, .1], [.1, .1, .1, 1]])
    found = merges(members, [0, 0, 0, 1], sims, 0.7, excluded=set())
    assert [(m.survivor, m.absorbed) for m in found] == [("b", "a")]
    assert merges(members, [0, 0, -1, -1], sims, 0.95, excluded=set()) == []
    assert merges(members, [0, 0, 0, 1], sims, 0.7, excluded={"a"}) == []


def test_contradictions_inside_a_cluster_keep_the_latest() -> None:
    members = [member("a", "Do not use emojis.", last=1), member("b", "Use emojis.", last=5),
               member("c", "Do not use emojis.", last=2, confirmed=True)]
    sims = np.ones((3, 3))
    found = contradictions(members, [0, 0, 0], sims)
    assert [(c.loser, c.winner, c.type) for c in found] == [("a", "b", "contradicts")]  # confirmed "c" is kept
    assert contradictions(members, [0, 1, 2], sims) == []


def test_keyphrases_prefer_words_that_set_a_cluster_apart() -> None:
    keys = [normalize(t) for t in ("Use uv instead of pip.", "Install packages with uv, not pip.",
                                   "Keep answers short.", "Use pytest instead of unittest.")]
    assert keyphrases(keys[:2], keys, k=2) == ["pip", "uv"]
