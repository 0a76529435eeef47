"""The configuration reference (docs/configuration.md), generated from the settings models.

    python -m kg.config_reference --write     # regenerate docs/configuration.md
    python -m kg.config_reference --check     # exit 1 when the file is not current

Every key of the tree is listed under its TOML table with its type, its default and the comment
written beside it in `kg/core/settings/tree.py` (the models' own documentation), so the page cannot drift
from the code: a test runs `--check`.
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from kg.core.settings import tree as config

DOC = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"

INTRO = """\
# Configuration reference

One settings tree (`kg/core/settings/tree.py`), read once from `kg.toml` in the working folder (or the file
named by `KG_CONFIG`) and the environment: `KG_<SECTION>__<KEY>` for any key
(`KG_MEMORY__RETRIEVAL__STRATEGY=bm25`), plus the conventional `NEO4J_URI`, `NEO4J_USER`,
`NEO4J_PASSWORD`, `NEO4J_DATABASE`, `VOYAGE_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`.
Precedence, highest first: arguments, environment, `kg.toml`, defaults. Secrets are `SecretStr`:
never logged, never shown. `kg.toml.example` is a commented starting point.

This page is generated from the settings models (`python -m kg.config_reference --write`); a test
fails when it is not current.
"""


def _comments() -> dict[tuple[str, str], str]:
    """(class, field) -> the comment on the field's line (or the lines right above it) in settings/tree.py,
    and the other modules that define settings models mounted in the tree."""
    found: dict[tuple[str, str], str] = {}
    for module in {inspect.getmodule(m) for m in _models(config.Settings)}:
        if module is None:
            continue
        source = inspect.getsource(module)
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    text = lines[(item.end_lineno or item.lineno) - 1]
                    comment = text.split("  # ", 1)[1].strip() if "  # " in text else ""
                    above, block = item.lineno - 2, list[str]()
                    while above >= 0 and lines[above].strip().startswith("#"):
                        block.insert(0, lines[above].strip().lstrip("# "))
                        above -= 1
                    found[(node.name, item.target.id)] = " ".join([*block, comment]).strip()
    return found


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    out = [model]
    for field in model.model_fields.values():
        for sub in _submodels(field.annotation):
            out += _models(sub)
    return out


def _submodels(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _submodels(arg)]


def _type(annotation: Any) -> str:
    if annotation is SecretStr or SecretStr in get_args(annotation):
        return "secret"
    origin = get_origin(annotation)
    if origin is not None and str(origin).endswith("Literal"):
        return " \\| ".join(repr(a).replace("'", '"') for a in get_args(annotation))
    name = getattr(annotation, "__name__", None)
    text = name if name and origin is None else str(annotation).replace("typing.", "")
    return text.replace("pathlib.", "").replace("NoneType", "None").replace("|", "\\|")


def _default(field: FieldInfo) -> str:
    factory = field.default_factory
    if inspect.isfunction(factory) and factory.__doc__:  # computed where it runs: say how
        return factory.__doc__.strip().splitlines()[0]
    if factory is not None:
        value = factory()  # type: ignore[call-arg]
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(table)"
    if isinstance(value, SecretStr):
        return "(secret)"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return str(value).lower()
    return str(value).replace("|", "\\|")


def render() -> str:
    comments = _comments()
    out = [INTRO]

    def table(model: type[BaseModel], path: str) -> None:
        rows, subtables = [], []
        for name, field in model.model_fields.items():
            subs = _submodels(field.annotation)
            if subs:  # a table, or a dict of tables named by the user: [llm.services.<name>]
                subtables.append((name if get_origin(field.annotation) is not dict else f"{name}.<name>", subs[0]))
                continue
            about = comments.get((model.__name__, name), "")
            default = _default(field)
            shown = default if default.startswith("`") else f"`{default}`"
            rows.append(f"| `{name}` | {_type(field.annotation)} | {shown} | {about} |")
        if rows:
            own = model.__dict__.get("__doc__") or ""  # not BaseModel's
            doc = inspect.cleandoc(own).split("\n\n")[0].replace("\n", " ")
            out.append(f"## `[{path}]`\n")
            if doc and model is not config.Settings:
                out.append(doc + "\n")
            out.append("| key | type | default | what it does |\n|---|---|---|---|")
            out.extend(rows)
            out.append("")
        for name, sub in subtables:
            table(sub, f"{path}.{name}" if path else name)

    table(config.Settings, "")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--write" in args:
        DOC.write_text(text, "utf-8")
        return 0
    if "--check" in args:
        current = DOC.read_text("utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is not current: run `python -m kg.config_reference --write`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
