"""The types a user of `Memory`, `AsyncMemory` and the `Client`s handles, in one place: what goes in
(`Message`, `Attachment`, a retrieval `Recipe`), what comes back (turns, sessions, search hits,
facts, relationships, corrections, reports) and the errors to catch. `from kg import Message` gives
the same objects (`kg` loads this module on first use).

They live with the code that makes them (`kg.core`, `kg.queries.recipes`); import them from here or
from `kg`, not from there: those modules may move. `tests/test_exported_members.py` holds this list
to what the module holds. The remote client's errors (`ClientError`, `NotFound`...) are in
`kg.client` and `kg`."""

from kg.core.models.corrections import (
    ClusterReport,
    ClusterView,
    CoreRules,
    CorrectionResult,
    CorrectionView,
    MaintenanceReport,
    MergeReport,
    StatusChange,
)
from kg.core.models.export import ExportFormatError, ImportReport
from kg.core.models.facts import FactChange, FactView, RememberResult
from kg.core.models.indexing import IndexReport, SessionIndexReport
from kg.core.models.jobs import Job, RunReport
from kg.core.models.limits import FieldError
from kg.core.models.recall import MemoryHit, RankedTurn, SessionHit, Summary
from kg.core.models.relationships import RelateResult, RelationshipView
from kg.core.models.signals import CitedDecision, CitedSignal, SessionSignals
from kg.core.models.trust import (
    ChangeResult,
    Changes,
    ConfidenceParts,
    CorrectionChange,
    Explanation,
    HeldMerge,
    QuotedTurn,
    StatementEvent,
)
from kg.core.models.turns import Attachment, Erasure, IngestReport, Message, Session, Turn
from kg.queries.recipes import RECIPES, Boosts, Recipe

__all__ = [
    "Attachment",
    "Boosts",
    "ChangeResult",
    "Changes",
    "CitedDecision",
    "CitedSignal",
    "ClusterReport",
    "ClusterView",
    "ConfidenceParts",
    "CoreRules",
    "CorrectionChange",
    "CorrectionResult",
    "CorrectionView",
    "Erasure",
    "Explanation",
    "ExportFormatError",
    "FactChange",
    "FactView",
    "FieldError",
    "HeldMerge",
    "ImportReport",
    "IndexReport",
    "IngestReport",
    "Job",
    "MaintenanceReport",
    "MemoryHit",
    "MergeReport",
    "Message",
    "QuotedTurn",
    "RECIPES",
    "RankedTurn",
    "Recipe",
    "RelateResult",
    "RelationshipView",
    "RememberResult",
    "RunReport",
    "Session",
    "SessionHit",
    "SessionIndexReport",
    "SessionSignals",
    "StatementEvent",
    "StatusChange",
    "Summary",
    "Turn",
]
