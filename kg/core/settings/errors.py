"""The settings' own error, apart from the pydantic models: `kg --help` names it without loading them."""

from __future__ import annotations


class UnknownSettingError(ValueError):
    """A key that no settings section defines."""
