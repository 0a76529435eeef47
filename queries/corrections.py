"""Reading corrections: browsing, the core rules an agent's prompt gets, the top clusters.

Weights and the rules' standing are computed at the moment of the read (`kg.core.models.correction_weight`),
so a rule that stopped recurring drops out of `core_rules` even before the nightly job demotes it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Mapping

from kg.core.models.correction_weight import CorrectionState, status_at, weight_at
from kg.core.models.corrections import STATUSES, ClusterView, CoreRules, CorrectionStatus, CorrectionView
from kg.core.models.turns import as_utc
from kg.core.models.values import native_props
from kg.core.settings.memory import CorrectionSettings
from kg.core.store.store import Store

_BROWSE_LIMIT = 1000



def _state(c: Mapping[str, Any]) -> CorrectionState:
    return CorrectionState(c["confidence"], c["reinforcement_count"], c["first_seen_at"], c["last_seen_at"],
                           c["half_life_days"], c.get("confirmed_at") is not None)


def _view(row: Mapping[str, Any], at: datetime, cfg: CorrectionSettings) -> CorrectionView:
    c = native_props(row["correction"], drop=("embedding",))
    weight = 0.0 if c.get("invalidated_at") else weight_at(_state(c), at, cfg)
    return CorrectionView.model_validate({**c, "session_ids": row["session_ids"], "weight": weight})


async def corrections(
    store: Store, cfg: CorrectionSettings, namespace: str, status: CorrectionStatus | None = None,
    include_invalidated: bool = False, at: datetime | None = None, limit: int = _BROWSE_LIMIT,
) -> list[CorrectionView]:
    """A namespace's corrections, most reinforced first, with their weight at `at` (None: now)."""
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    when = as_utc(at) if at is not None else datetime.now(timezone.utc)
    rows = await store.read("corrections/list", namespace=namespace, status=status,
                            include_invalidated=include_invalidated, id=None, limit=limit)
    return [_view(r, when, cfg) for r in rows]


async def correction(store: Store, cfg: CorrectionSettings, namespace: str, correction_id: str,
                     at: datetime | None = None) -> CorrectionView | None:
    when = as_utc(at) if at is not None else datetime.now(timezone.utc)
    rows = await store.read("corrections/list", namespace=namespace, status=None, include_invalidated=True,
                            id=correction_id, limit=1)
    return _view(rows[0], when, cfg) if rows else None


async def core_rules(store: Store, cfg: CorrectionSettings, namespace: str, at: datetime | None = None) -> CoreRules:
    """Rules, and preferences of at least `core_preference_min_weight`, standing at `at` (None: now),
    strongest first."""
    when = as_utc(at) if at is not None else datetime.now(timezone.utc)
    rules: list[CorrectionView] = []
    preferences: list[CorrectionView] = []
    for stored in ("rule", "preference"):
        rows = await store.read("corrections/list", namespace=namespace, status=stored,
                                include_invalidated=False, id=None, limit=_BROWSE_LIMIT)
        for row in rows:
            view = _view(row, when, cfg)
            if view.trust != "trusted":  # never in a prompt until a person confirmed it
                continue
            standing = status_at(_state(view.model_dump()), max(when, view.last_seen_at), cfg)
            if standing == "rule":
                rules.append(view.model_copy(update={"status": standing}))
            elif standing == "preference" and view.weight >= cfg.core_preference_min_weight:
                preferences.append(view.model_copy(update={"status": standing}))
    def key(v): return (-v.weight, v.rule_text)
    return CoreRules(namespace=namespace, at=when, rules=sorted(rules, key=key), preferences=sorted(preferences, key=key))


async def top_clusters(store: Store, namespace: str, limit: int = 10) -> list[ClusterView]:
    """The most reinforced clusters of the last `maintain_corrections` run."""
    rows = await store.read("corrections/clusters_top", namespace=namespace, limit=limit)
    return [ClusterView.model_validate({**r["cluster"], "members": r["members"], "reinforcement": r["reinforcement"],
                                        "statuses": sorted(r["statuses"], key=STATUSES.index)}) for r in rows]
