"""Grouping corrections: HDBSCAN over their embeddings, merges and contradictions inside a cluster,
keyphrase labels. Pure functions over arrays and plain data; no database.

HDBSCAN runs on the unit vectors with the euclidean metric (monotone in cosine). A set of
`umap_min_points` or more is first reduced with UMAP (cosine metric, fixed seed), where density
estimates in 384 dimensions stop being meaningful. On a few dozen corrections, density alone
chains unrelated rules into one cluster (measured: 15 distinct rules, one cluster of purity 0.27),
so each cluster is then split into the groups its members form at >= `link_similarity` cosine;
HDBSCAN also leaves borderline points of tiny sets out, so a noise point first joins the cluster of
its most similar clustered point at that similarity. Points left alone belong to no cluster.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from kg.core.extras import require
from kg.core.models.corrections import LinkType
from kg.core.settings.memory import CorrectionClusteringSettings

from .normalize import conflict, shape, tokens


def cluster_labels(vectors: np.ndarray, cfg: CorrectionClusteringSettings) -> tuple[list[int], bool]:
    """One label per unit vector (-1: noise), and whether UMAP reduced the set first."""
    n = len(vectors)
    if n < cfg.min_cluster_size:
        return [-1] * n, False
    points, reduced = vectors, False
    if n >= cfg.umap_min_points:
        require("clustering", "umap")
        import umap  # slow to import (numba); only large sets need it

        points = umap.UMAP(n_components=min(cfg.umap_components, n - 2), n_neighbors=min(15, n - 1),
                           metric="cosine", min_dist=0.0, random_state=0, n_jobs=1).fit_transform(vectors)
        reduced = True
    require("clustering", "sklearn")
    from sklearn.cluster import HDBSCAN

    labels = HDBSCAN(min_cluster_size=cfg.min_cluster_size, min_samples=cfg.min_samples,
                     metric="euclidean", allow_single_cluster=True, copy=True).fit_predict(points)
    return _split_loose(vectors, _attach_noise(vectors, [int(x) for x in labels], cfg), cfg), reduced


def _attach_noise(vectors: np.ndarray, labels: list[int], cfg: CorrectionClusteringSettings) -> list[int]:
    """A noise point joins the cluster of its most similar clustered point when that similarity is at
    least `link_similarity` (HDBSCAN leaves borderline points of tiny sets out)."""
    clustered = [i for i, lab in enumerate(labels) if lab >= 0]
    if not clustered:
        return labels
    out = list(labels)
    for i, lab in enumerate(labels):
        if lab < 0:
            sims = vectors[clustered] @ vectors[i]
            best = int(np.argmax(sims))
            if sims[best] >= cfg.link_similarity:
                out[i] = labels[clustered[best]]
    return out


def _split_loose(vectors: np.ndarray, labels: list[int], cfg: CorrectionClusteringSettings) -> list[int]:
    """Each cluster becomes the connected components of its members linked at >= `link_similarity`;
    a member linked to none is noise. Density alone chains unrelated rules in small sets."""
    out = [-1] * len(labels)
    next_label = 0
    for label in sorted(set(labels) - {-1}):
        idx = [i for i, lab in enumerate(labels) if lab == label]
        sims = vectors[idx] @ vectors[idx].T
        parent = list(range(len(idx)))

        def root(i: int, parent: list[int] = parent) -> int:  # this label's forest
            while parent[i] != i:
                i = parent[i]
            return i

        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                if sims[a, b] >= cfg.link_similarity:
                    parent[root(b)] = root(a)
        components: dict[int, list[int]] = {}
        for k in range(len(idx)):
            components.setdefault(root(k), []).append(idx[k])
        for members in components.values():
            if len(members) >= cfg.min_cluster_size:
                for i in members:
                    out[i] = next_label
                next_label += 1
    return out


@dataclass(frozen=True)
class Member:
    """A live correction as the batch job sees it."""

    id: str
    key: str
    rule_text: str
    reinforcement_count: int
    first_seen_at: float  # epoch seconds
    last_seen_at: float
    confirmed: bool


@dataclass(frozen=True)
class Merge:
    survivor: str
    absorbed: str
    similarity: float


@dataclass(frozen=True)
class Contradiction:
    loser: str  # last seen earlier
    winner: str
    type: LinkType
    similarity: float


def contradictions(members: Sequence[Member], labels: Sequence[int], sims: np.ndarray) -> list[Contradiction]:
    """Conflicting pairs inside one cluster: the one seen last wins; each loser once."""
    found: dict[str, Contradiction] = {}
    for i, j in _pairs_in_clusters(labels):
        a, b = members[i], members[j]
        newer, older = (a, b) if (a.last_seen_at, a.id) > (b.last_seen_at, b.id) else (b, a)
        kind = conflict(shape(newer.key), shape(older.key))
        if kind is not None and older.id not in found and not older.confirmed:
            found[older.id] = Contradiction(older.id, newer.id, kind, float(sims[i, j]))
    losers = set(found)
    return [c for c in found.values() if c.winner not in losers]


def merges(members: Sequence[Member], labels: Sequence[int], sims: np.ndarray, threshold: float,
           excluded: set[str]) -> list[Merge]:
    """Near-duplicates inside one cluster, joined most similar pair first (single linkage) but never
    across a conflict; each group folds into its most reinforced member."""
    parent = list(range(len(members)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    groups: dict[int, list[int]] = {i: [i] for i in range(len(members))}
    pairs = sorted(((float(sims[i, j]), i, j) for i, j in _pairs_in_clusters(labels)
                    if sims[i, j] >= threshold and members[i].id not in excluded and members[j].id not in excluded),
                   reverse=True)
    for _, i, j in pairs:
        ri, rj = root(i), root(j)
        if ri == rj or _any_conflict(members, groups[ri], groups[rj]):
            continue
        parent[rj] = ri
        groups[ri].extend(groups.pop(rj))
    out: list[Merge] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        survivor = max(group, key=lambda k: (members[k].confirmed, members[k].reinforcement_count,
                                             -members[k].first_seen_at, members[k].id))
        out.extend(Merge(members[survivor].id, members[k].id, float(sims[survivor, k]))
                   for k in group if k != survivor)
    return out


def _any_conflict(members: Sequence[Member], left: list[int], right: list[int]) -> bool:
    for i in left:
        for j in right:
            a, b = shape(members[i].key), shape(members[j].key)
            if conflict(a, b) or conflict(b, a):
                return True
    return False


def _pairs_in_clusters(labels: Sequence[int]) -> list[tuple[int, int]]:
    by_label: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        if label >= 0:
            by_label.setdefault(label, []).append(index)
    return [(a, b) for idx in by_label.values() for n, a in enumerate(idx) for b in idx[n + 1:]]


def keyphrases(cluster_keys: Sequence[str], all_keys: Sequence[str], k: int = 3) -> list[str]:
    """The words that set a cluster apart: frequency inside it times rarity in the namespace."""
    docs = [tokens(key) for key in all_keys]
    df = Counter(word for doc in docs for word in doc)
    tf = Counter(word for key in cluster_keys for word in tokens(key))
    n = len(docs)
    scored = sorted(tf, key=lambda w: (-(tf[w] * math.log(1 + n / df.get(w, 1))), w))
    return scored[:k]
