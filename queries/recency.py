"""Recency within a topic (`Boosts.restated`): a later session's restatement of a user's turn (an
updated value, a changed plan) ranks at least as high as the turn it restates."""

from __future__ import annotations

from kg.core.store.store import Store

from .analysis import TimeWindow
from .candidates import Candidate
from .feedback import vector_rows
from .fusion import later_first
from .recipes import Recipe
from .vectors import NamespaceVectors, unit_rows


async def restated_first(store: Store, vectors: NamespaceVectors | None, namespace: str, order: list[str],
                         scores: dict[str, float], pool: dict[str, Candidate], recipe: Recipe,
                         window: TimeWindow | None, read: dict[str, list]) -> list[str]:
    """Recency within a topic (`Boosts.restated`): the first `rerank_top_n` of `order` with each
    user turn preceded by a later session's restatement of it (same speaker, own vectors at
    least that close), as an updated value should be; each rank keeps its score. Not when the
    question names its time ("in March", "last week"): then the turns of that time are wanted.
    The vector rows it reads are put in `read` (recall scales turns by them), and those already in
    `read` are not read again; from `vectors`, the cache this search read the namespace from (exact
    search; else None), when it holds them all."""
    head = order[: recipe.rerank_top_n]
    if not recipe.boosts.restated or window is not None or len(head) < 2:
        return order
    cached = await vector_rows(store, head, read, vectors, namespace)
    read.update(cached)
    found = [r for r in cached.values() if r[2]]
    role = {r[0]: r[1] for r in found}
    if len(role) < 2:
        return order
    unit = dict(zip(role, unit_rows([r[2] for r in found])))

    def restates(later: str, earlier: str) -> bool:
        b, a = pool[later], pool[earlier]
        return (b.session_id != a.session_id and b.ts > a.ts and b.speaker == a.speaker and later in role
                and earlier in role and role[later] == role[earlier] == "user"
                and float(unit[later] @ unit[earlier]) >= recipe.boosts.restated)

    new_head = later_first(head, restates)
    if new_head != head:
        scores.update(zip(new_head, [scores[t] for t in head]))
    return new_head + order[len(head):]
