"""Session quality and outcome as a ranking signal (`Recipe.session_signal_weight`).

A turn from a session that went well (high quality, outcome success) is more likely to hold
reliable information than the same match from a failed one. The design notes weigh it as
0.7 semantic + 0.2 quality + 0.1 outcome; here the fused score keeps its scale and each turn gets
`weight x signal` first-rank RRF votes, the signal being 2/3 quality and 1/3 outcome, centred so
that a session of unknown quality and outcome scores 0: neither favoured nor penalised.
"""

from __future__ import annotations

from collections.abc import Iterable

from kg.core.store.store import Store

# outcome -> its part of the signal, in [-1, 1]; "ongoing" and unknown say nothing
OUTCOME_VALUE = {"success": 1.0, "partial_success": 0.2, "failure": -1.0, "abandoned": -1.0}
QUALITY_SHARE, OUTCOME_SHARE = 2 / 3, 1 / 3  # the notes' 0.2 : 0.1


def session_signal(quality: float | None, outcome: str | None) -> float:
    """In [-1, 1]: quality 0..1 mapped to -1..1, outcome by `OUTCOME_VALUE`; unknown parts add 0."""
    q = 0.0 if quality is None else 2.0 * min(1.0, max(0.0, float(quality))) - 1.0
    return QUALITY_SHARE * q + OUTCOME_SHARE * OUTCOME_VALUE.get(outcome or "", 0.0)


async def session_signals(store: Store, namespace: str, session_ids: Iterable[str]) -> dict[str, float]:
    """The signal of each session with a current session summary; a session missing here is unknown (0)."""
    ids = sorted(set(session_ids))
    if not ids:
        return {}
    rows = await store.read("retrieval/session_signals", namespace=namespace, ids=ids)
    return {r["id"]: session_signal(r["quality"], r["outcome"]) for r in rows}
