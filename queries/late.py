"""The late list (`Recipe.late_weight`): the fused lists' first turns ranked again by late interaction
(`kg.core.embedders.late`), each query token's best match among a turn's own token vectors, summed.
It reads only the turns the other lists already ranked high, and of those the first whose tokens fit
`Recipe.late_budget` (16,384), so its cost grows neither with the namespace nor with its turns' length."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable, Iterator
from datetime import datetime

import numpy as np

from kg.core.embedders.late import BYTES_PER_TOKEN, LateEncoder
from kg.core.models.turns import Role
from kg.core.store.store import Store

from .recipes import Recipe
from .vectors import SCORE_DECIMALS, HeldNamespace, NamespaceVectors

log = logging.getLogger(__name__)


async def late_list(store: Store, cached: NamespaceVectors | None, late: LateEncoder, namespace: str,
                    head: list[str], encoded: Awaitable[np.ndarray], budget: int = 0) -> list[str]:
    """`head`'s turns that have token vectors, in `head`'s order while their tokens together fit
    `budget` (the first always; 0: all), by their score against the query's (`encoded`), rounded as
    the dense lists are, then by id, so every door ranks alike; the tokens from the vector cache where
    it holds the namespace (the exact path: this search refreshed it), else from the store. A failing
    encoder costs the search its late list (logged), never the search."""
    try:
        query = await encoded
    except Exception as exc:  # noqa: BLE001 - see above
        log.warning("late interaction failed, the search goes without its list: %s", exc)
        return []
    held = cached.late_tokens(namespace, head) if cached is not None else None
    if held is None:
        rows = await store.read("retrieval/late_tokens", namespace=namespace, ids=head)
        held = {r["id"]: bytes(r["tokens"]) for r in rows if r["tokens"]}
    held = _fitting(budget, ((t, [held[t]]) for t in head if t in held))
    if not held:
        return []
    ids = list(held)
    found = await asyncio.wrap_future(late.submit_scores(query, list(held.values())))
    score = {t: round(float(v), SCORE_DECIMALS) for t, v in zip(ids, found)}
    return sorted(ids, key=lambda t: (-score[t], t))


async def session_late_list(cached: NamespaceVectors | None, late: LateEncoder, namespace: str, head: list[str],
                            encoded: Awaitable[np.ndarray], as_of: datetime | None, recipe: Recipe,
                            role: Role | None = None) -> list[str]:
    """`head`'s sessions, each scored as one document of its turns' token vectors (those by `as_of`):
    each query token's best match anywhere in the session, summed; rounded, then by id. Sessions are
    taken in `head`'s order while their tokens together fit `recipe.session_late_budget` (the first
    always; 0: all), so the cost is bounded whatever the sessions' length; with
    `recipe.session_late_by_role`, a session is its turns of the `role` the query addresses. [] where
    the vector cache does not hold the namespace whole or the encoder failed (late_list has logged it)."""
    try:
        query = await encoded
    except Exception:  # noqa: BLE001 - see above
        return []
    space = cached.held(namespace) if cached is not None else None
    if space is None or not space.complete:
        return []
    held = _session_tokens(space, head, as_of.timestamp() if as_of else None, recipe.session_late_budget,
                           role if recipe.session_late_by_role else None)
    if not held:
        return []
    ids = list(held)
    found = await asyncio.wrap_future(late.submit_scores(query, [held[s] for s in ids]))
    score = {s: round(float(v), SCORE_DECIMALS) for s, v in zip(ids, found)}
    return sorted(ids, key=lambda s: (-score[s], s))


def _fitting(budget: int, keys: Iterable[tuple[str, list[bytes]]]) -> dict[str, bytes]:
    """Each key's packed token vectors joined, in order while their tokens together fit `budget` (the
    first always; 0: all); the keys past it are never joined, nor read from a generator."""
    out: dict[str, bytes] = {}
    spent = 0
    for key, parts in keys:
        spent += sum(map(len, parts)) // BYTES_PER_TOKEN
        if out and budget and spent > budget:
            break
        out[key] = b"".join(parts)
    return out


def _session_tokens(space: HeldNamespace, session_ids: list[str], until: float | None, budget: int,
                    role: Role | None = None) -> dict[str, bytes]:
    """Each of `session_ids`' turns' packed token vectors joined (those at or before `until`, epoch
    seconds; None: all), in order while their tokens together fit `budget` (`_fitting`), so the
    sessions past it are never copied; a session with none is left out."""
    return _fitting(budget, _session_parts(space, session_ids, until, role))


def _session_parts(space: HeldNamespace, session_ids: list[str], until: float | None, role: Role | None
                   ) -> Iterator[tuple[str, list[bytes]]]:
    for s in session_ids:
        block = space.blocks.get(s)
        if block is None:
            continue
        by_then = block.times() <= until if until is not None else np.ones(len(block.rows), dtype=bool)
        tokens = [t for r, t, kept in zip(block.rows, block.late, by_then)
                  if t and kept and (role is None or r[6] == role)]
        if tokens:
            yield s, tokens
