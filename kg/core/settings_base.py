"""What every section of the settings tree shares: unknown keys are refused, so a typo never runs
silently on defaults, and the refusal names the file, the section, the key and the closest valid key."""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SettingsError(ValueError):
    """The settings do not load; the message says where and why, one line per problem."""


def explain(exc: ValidationError, root: type[BaseModel], toml_file: Path | None) -> SettingsError:
    """`exc` of loading `root`, in words: for an unknown key, its section, the file or environment
    it came from, and the valid keys closest to it."""
    lines = []
    for error in exc.errors(include_url=False):
        loc = [str(p) for p in error["loc"]]
        section = "[" + ".".join(loc[:-1]) + "]" if len(loc) > 1 else "the top level"
        where = _source(loc, toml_file)
        if error["type"] == "extra_forbidden":
            known = _fields(root, loc[:-1])
            close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else (f"; valid keys: {', '.join(known)}" if known else "")
            lines.append(f"{where}: {section} has no key {loc[-1]!r}{hint}")
        else:
            lines.append(f"{where}: {section} {loc[-1]!r}: {error['msg']}")
    return SettingsError("the settings do not load:\n  " + "\n  ".join(lines))


def _fields(root: type[BaseModel], path: list[str]) -> list[str]:
    """The keys of the section at `path` (empty when a part of it is a table of the user's names)."""
    model: Any = root
    for part in path:
        field = getattr(model, "model_fields", {}).get(part)
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return sorted(getattr(model, "model_fields", {}))


def _source(loc: list[str], toml_file: Path | None) -> str:
    if toml_file is not None:
        try:
            node: Any = tomllib.loads(toml_file.read_text("utf-8"))
            for part in loc:
                node = node[part]
            return str(toml_file)
        except (KeyError, TypeError, ValueError, OSError):
            pass
    return "the environment (KG_" + "__".join(p.upper() for p in loc) + ")"
