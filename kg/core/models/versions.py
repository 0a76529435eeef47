"""What every version of a statement about a subject carries: its two time axes (docs/facts-over-time.md)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from kg.core.vocabulary import Trust


class Version(BaseModel):
    """One version of a fact or relationship about `subject`: true in the world from `valid_from` to
    `valid_to`, believed from `recorded_at` (the server's transaction time) until `expired_at`."""

    id: str
    namespace: str
    subject: str
    valid_from: datetime
    valid_to: datetime | None = None
    recorded_at: datetime
    expired_at: datetime | None = None
    trust: Trust = "trusted"  # untrusted: opened by an untrusted write, not confirmed
