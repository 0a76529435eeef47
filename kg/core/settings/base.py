"""What every section of the settings tree shares: unknown keys are an error, never silently ignored,
and that error names where the key came from, its section and the closest valid key."""

from __future__ import annotations

import difflib
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from kg.core.settings.errors import UnknownSettingError


class Section(BaseModel):
    """A settings section: a typo such as `strategi` must fail, or the user runs on defaults unaware."""

    model_config = ConfigDict(extra="forbid")


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The settings model an annotation holds (`Section`, `dict[str, Section]`, `Section | None`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _section_of(root: type[BaseModel], path: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model that holds the last key of `path`; mapping keys (a service's name) are skipped."""
    model: type[BaseModel] | None = root
    skip_mapping_key = False
    for key in path:
        if model is None:
            return None
        if skip_mapping_key:
            skip_mapping_key = False
            continue
        field = model.model_fields.get(str(key))
        if field is None:
            return None
        inner = _model_in(field.annotation)
        skip_mapping_key = typing.get_origin(field.annotation) is dict
        model = inner
    return model


def _in_file(file: Path | None, loc: tuple[str | int, ...]) -> bool:
    if file is None:
        return False
    import tomllib

    try:
        node: Any = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    for key in loc:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def unknown_keys(exc: ValidationError, root: type[BaseModel], file: Path | None) -> UnknownSettingError | None:
    """The unknown keys of a failed load as one readable error, or None when none is among its errors."""
    lines = []
    for error in exc.errors():
        if error["type"] != "extra_forbidden":
            continue
        loc = tuple(error["loc"])
        section_path, key = loc[:-1], str(loc[-1])
        section = ".".join(str(part) for part in section_path) or "(top level)"
        where = f"{file}" if _in_file(file, loc) else "the environment or the arguments"
        line = f"{where}: [{section}] has no key {key!r}"
        model = _section_of(root, section_path)
        close = difflib.get_close_matches(key, list(model.model_fields), n=1) if model is not None else []
        if close:
            line += f"; did you mean {close[0]!r}?"
        elif model is not None:
            line += f"; valid keys: {', '.join(model.model_fields)}"
        lines.append(line)
    return UnknownSettingError("unknown setting: " + "\n".join(lines)) if lines else None
