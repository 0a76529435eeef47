"""Test conversations written as a reader would write them: one `Speaker: text` line per message.
The assistant speaks as `Bot` or `Assistant`; every other speaker is a user."""

from __future__ import annotations

ASSISTANTS = ("Bot", "Assistant")


def transcript(text: str) -> list[tuple[str, str, str]]:
    """(role, speaker, text) of each non-empty line of `text`."""
    said = [line.strip().split(": ", 1) for line in text.strip().splitlines() if line.strip()]
    return [("assistant" if speaker in ASSISTANTS else "user", speaker, words) for speaker, words in said]
