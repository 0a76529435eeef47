"""`AsyncMemory`'s corrections and rules: the user's corrections, their graduation into rules,
and the nightly upkeep (ingest/corrections, queries/corrections)."""

from __future__ import annotations

from kg.engine import Engine
from datetime import datetime
from typing import Iterable

from kg.core.models.vocabulary import Trust

from kg.core.models.corrections import (
    ClusterView, CoreRules, CorrectionResult, CorrectionStatus, CorrectionView, MaintenanceReport,
)
from kg.core.models.turns import check_namespace
from kg.core.models.requests import CorrectionReport
from kg.queries import corrections as correction_queries


class RulesFacade(Engine):
    """Mixed into `AsyncMemory`."""


    # -- corrections and rules -------------------------------------------------------------------
    async def add_correction(
        self,
        namespace: str,
        session_id: str,
        rule_text: str,
        original_behavior: str | None = None,
        corrected_behavior: str | None = None,
        correction_type: str = "preference",
        seen_at: datetime | None = None,
        evidence_turn_ids: Iterable[str] = (),
        confidence: float | None = None,
        trust: Trust = "trusted",
    ) -> CorrectionResult:
        """Record that the user corrected the agent in `session_id` (the extractor's path too). Decides
        added / reinforced / invalidated / noop against the namespace's similar corrections and
        graduates the affected one. A session not stored yet is created. An untrusted one
        (`trust="untrusted"`) never reinforces, invalidates or graduates until confirmed (`confirm`).
        See docs/corrections.md."""
        from kg.ingest.corrections.writer import CorrectionWriter  # here: importing it first must not cycle via kg

        correction = CorrectionReport.of(locals())
        check_namespace(namespace)
        writer = CorrectionWriter(self.store, self.embedder, self.settings.memory.corrections, self.correction_judge,
                                  self.settings.memory.vectors)
        return await writer.add(namespace, correction)

    async def confirm_rule(self, namespace: str, correction_id: str, at: datetime | None = None) -> CorrectionView:
        """The user explicitly confirmed a correction: it becomes a rule (and decays slowly)."""
        cfg = self.settings.memory.corrections
        from kg.ingest.corrections.writer import CorrectionWriter

        await CorrectionWriter(self.store, self.embedder, cfg).confirm(namespace, correction_id, at)
        view = await correction_queries.correction(self.store, cfg, namespace, correction_id, at)
        assert view is not None
        return view

    async def core_rules(self, namespace: str, at: datetime | None = None) -> CoreRules:
        """Rules and strong preferences standing at `at` (None: now); `.render()` gives a prompt block."""
        return await correction_queries.core_rules(self.store, self.settings.memory.corrections, namespace, at)

    async def corrections(
        self, namespace: str, status: CorrectionStatus | None = None, include_invalidated: bool = False
    ) -> list[CorrectionView]:
        """Browse a namespace's corrections, most reinforced first, weights as of now."""
        return await correction_queries.corrections(self.store, self.settings.memory.corrections, namespace,
                                                    status, include_invalidated)

    async def correction_clusters(self, namespace: str, limit: int = 10) -> list[ClusterView]:
        """The most reinforced clusters found by the last `maintain_corrections`."""
        return await correction_queries.top_clusters(self.store, namespace, limit)

    async def maintain_corrections(self, namespace: str, now: datetime | None = None) -> MaintenanceReport:
        """The nightly job: cluster, merge near-duplicates, resolve contradictions, promote and decay;
        writes a JSON and a markdown report under `[memory.corrections.clustering] report_dir`."""
        from kg.ingest.corrections.maintain import maintain

        return await maintain(self.store, self.settings.memory.corrections, namespace, now, self.correction_labeler)
