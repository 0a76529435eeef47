"""The pydantic models and rules that cross the public API, one module per domain: turns and sessions
(`turns`), facts, relationships, what every version of either carries (`versions`), corrections (and
how one weighs, `correction_weight`), recall, trust, signals, indexing, jobs, the parameter lists of
every door (`requests`), the limits on what a caller may send (`limits`), the words every door
shares (`vocabulary`) and the export format (`export`).

`kg.core.models.Message` and the other turn models are re-exported here, where the docs point users.
"""

from kg.core.models.turns import (
    Attachment,
    EraseScope,
    Erasure,
    IngestReport,
    Message,
    Role,
    Session,
    SessionTurns,
    Turn,
    check_namespace,
)

__all__ = ["Attachment", "EraseScope", "Erasure", "IngestReport", "Message", "Role", "Session", "SessionTurns", "Turn",
           "check_namespace"]
