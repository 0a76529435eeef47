"""What post-session indexing reports: per session, and summed over a `index_pending` run."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

IndexStatus = Literal["indexed", "extraction_failed"]
_COUNTS = ("entities_created", "entities_merged", "entities_reused", "mentions", "facts", "relationships",
           "corrections", "decisions", "llm_calls", "input_tokens", "output_tokens")


class SessionIndexReport(BaseModel):
    """One session's indexing: what was written, what it cost, or why it failed."""

    namespace: str
    session_id: str
    status: IndexStatus
    extractor: str  # the backend: "offline" or a service in [llm.services]
    model: str
    prompt_version: str
    chunks: int = 0
    entities_created: int = 0
    entities_merged: int = 0  # mentions the resolver folded into an existing entity
    entities_reused: int = 0  # linked by an earlier indexing of this session (re-index)
    mentions: int = 0  # (Turn)-[:MENTIONS]->(Entity) links
    facts: int = 0  # fact events that changed something (added, reinforced, superseded, retracted)
    relationships: int = 0  # relationship events that changed something (added, reinforced, superseded, retracted)
    withdrawn: int = 0  # statements an earlier extractor version found here and this one no longer does
    corrections: int = 0  # corrections added, reinforced or invalidating others (not no-ops)
    decisions: int = 0  # new decisions
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: list[dict[str, Any]] = Field(default_factory=list)  # per LLM call: purpose, model, prompt, tokens, latency
    error: str | None = None  # extraction_failed: the reason (redacted, safe to show)
    failures: int = 0  # extraction_failed: how many times in a row it failed


class IndexReport(BaseModel):
    """An `index_pending` run: every session it tried, and the sums."""

    sessions: list[SessionIndexReport] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def indexed(self) -> int:
        return sum(1 for s in self.sessions if s.status == "indexed")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed(self) -> int:
        return sum(1 for s in self.sessions if s.status == "extraction_failed")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def totals(self) -> dict[str, int]:
        return {name: sum(getattr(s, name) for s in self.sessions) for name in _COUNTS}
