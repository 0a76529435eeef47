"""Session signals: what passes 2 and 3 of the enrichment found (`[memory.indexing] passes = 3`),
each quoting and citing the turn where it happened.

Stored on the session's current session summary (`Summary.signals`) with the prompt version and
model of each pass. A list that is None is unknown (the offline extractor cannot tell, or the pass
did not run); an empty list means the pass looked and found nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

SIGNAL_MAX_CHARS = 500
SIGNAL_LISTS = ("decisions", "corrections", "frustration_signals", "repeated_instructions", "rules_expressed",
                "new_knowledge", "what_worked", "what_failed")


class CitedSignal(BaseModel):
    """One signal and the turn where it happened. `quote` comes first: the model quotes the turn
    before it states the claim, which grounds the claim in the transcript."""

    quote: str = Field("", description="A short verbatim excerpt of the cited turn, written first.")
    text: str = Field(min_length=1, description="The signal in one sentence.")
    turn_id: str = Field(min_length=1, description="The id of the turn where it happened, as shown.")

    @field_validator("quote", "text", "turn_id")
    @classmethod
    def _short(cls, v: str) -> str:
        return " ".join(v.split())[:SIGNAL_MAX_CHARS]


class CitedDecision(CitedSignal):
    """A decision the participants made, with why."""

    rationale: str = Field("", description="Why it was decided, as the conversation says; empty when it does not.")

    @field_validator("rationale")
    @classmethod
    def _short_rationale(cls, v: str) -> str:
        return " ".join(v.split())[:SIGNAL_MAX_CHARS]


class SessionSignals(BaseModel):
    """The stored enrichment of passes 2 and 3, with the prompt versions and models that made it."""

    decisions: list[CitedDecision] | None = None  # pass 2: decisions with their rationale
    corrections: list[CitedSignal] | None = None  # pass 2: the user correcting the assistant
    frustration_signals: list[CitedSignal] | None = None  # pass 2
    repeated_instructions: list[CitedSignal] | None = None  # pass 2: cites the repeat
    rules_expressed: list[CitedSignal] | None = None  # pass 2
    new_knowledge: list[CitedSignal] | None = None  # pass 2
    what_worked: list[CitedSignal] | None = None  # pass 3
    what_failed: list[CitedSignal] | None = None  # pass 3
    signals_prompt_version: str | None = None  # pass 2 (or the offline rules)
    signals_model: str | None = None
    quality_prompt_version: str | None = None  # pass 3; it also set the summary's `quality`
    quality_model: str | None = None

    def turn_ids(self) -> set[str]:
        """Every turn id a stored signal cites."""
        lists: list[Any] = [getattr(self, name) for name in SIGNAL_LISTS]
        return {s.turn_id for signals in lists for s in signals or []}
