"""The public surface, pinned (as httpx's test_exported_members.py does): each public module's
`__all__` names what it offers, each name there exists and says what it is, nothing public slips
out unlisted, and the docs and examples import only what is listed.

Public: `kg` (the facade, the client, the settings, and every type of `kg.types`), `kg.types`, the
client's module `kg.client`, the doors a program imports (`kg.http` for uvicorn, `kg.cli`) and the
framework doors `kg.integrations.<framework>`. The rest (`kg.core`, `kg.ingest`, `kg.queries`,
`kg.jobs`, `kg.mcp`, which is reached through `kg mcp` and `/mcp`) is inside: its modules may move."""

from __future__ import annotations
import __future__

import ast
import importlib
import inspect
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

# modules that only gather names from elsewhere: every public name they hold is exported
GATHERING = ("kg", "kg.types", "kg.http", "kg.cli", "kg.integrations.langgraph")
# modules with code of their own: every public class or function defined there is exported
DEFINING = ("kg.client", "kg.integrations.agent_framework", "kg.integrations.google_adk", "kg.integrations.langchain",
            "kg.integrations.llamaindex", "kg.integrations.openai_agents", "kg.integrations.pydantic_ai",
            "kg.integrations.strands")
PUBLIC = GATHERING + DEFINING


def public(name: str) -> types.ModuleType:
    """The module, or a skip when the extra it bridges to is not installed (strands has a venv of its own)."""
    try:
        return importlib.import_module(name)
    except ImportError as missing:
        if "pip install" in str(missing):
            pytest.skip(f"{name}: {missing}")
        raise


def is_public(name: str, value: Any) -> bool:
    """A name a reader of the module would take for its offer: not private, not a submodule bound on its
    package by an import, not the `annotations` of `from __future__`."""
    return not name.startswith("_") and not isinstance(value, (types.ModuleType, __future__._Feature))


def documented(value: Any) -> bool:
    if inspect.isclass(value):  # its own docstring: a pydantic model or an exception would inherit its base's
        return bool(value.__dict__.get("__doc__"))
    if inspect.isroutine(value):
        return bool(inspect.getdoc(value))
    return True  # data (RECIPES, the typer app): documented where it is defined


@pytest.mark.parametrize("name", PUBLIC)
def test_every_exported_name_exists_once_and_is_documented(name: str) -> None:
    module = public(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"
    for member in exported:
        value = getattr(module, member)  # the lazy names of `kg` load here
        assert documented(value), f"{name}.{member} has no docstring"


@pytest.mark.parametrize("name", GATHERING)
def test_a_gathering_module_exports_every_public_name_it_holds(name: str) -> None:
    module = public(name)
    held = {member for member, value in vars(module).items() if is_public(member, value)}
    missing = sorted(held - set(module.__all__))
    assert not missing, f"{name} holds public names missing from __all__: {missing}"


@pytest.mark.parametrize("name", DEFINING)
def test_a_module_exports_every_public_class_and_function_it_defines(name: str) -> None:
    module = public(name)
    defined = {member for member, value in vars(module).items() if is_public(member, value)
               and (inspect.isclass(value) or inspect.isroutine(value)) and getattr(value, "__module__", None) == name}
    assert defined == {m for m in module.__all__ if getattr(getattr(module, m), "__module__", None) == name}, (
        f"{name}: defined but not exported {sorted(defined - set(module.__all__))}")


def test_kg_exports_every_type_of_kg_types_and_the_clients_errors() -> None:
    import kg
    import kg.client
    import kg.types

    assert set(kg.types.__all__) <= set(kg.__all__)
    assert set(kg.client.__all__) <= set(kg.__all__)
    assert all(getattr(kg, member) is getattr(kg.types, member) for member in kg.types.__all__)
    assert set(kg.__all__) == set(kg.types.__all__) | set(kg.client.__all__) | {
        "AsyncMemory", "Memory", "Settings", "load_settings"}


BLOCK = re.compile(r"```python\n(?P<code>.*?)```", re.S)
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*.py"))]


def imports_of_kg() -> list[tuple[str, str, list[str]]]:
    """(where, module, names) of every `from kg... import` and `import kg...` in the docs' Python blocks
    and the examples."""
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        codes = [text] if path.suffix == ".py" else [m["code"] for m in BLOCK.finditer(text)]
        for code in codes:
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "kg":
                    found.append((path.name, node.module, [a.name for a in node.names]))
                elif isinstance(node, ast.Import):
                    found += [(path.name, a.name, []) for a in node.names if a.name.split(".")[0] == "kg"]
    return found


def test_the_docs_and_examples_import_only_exported_names() -> None:
    found = imports_of_kg()
    assert len(found) >= 20
    for where, module, names in found:
        assert module in PUBLIC, f"{where}: `{module}` is not a public module (one of {PUBLIC})"
        listed = {"kg": importlib.import_module("kg").__all__, "kg.types": importlib.import_module("kg.types").__all__}
        if module in listed:
            unlisted = sorted(set(names) - set(listed[module]))
            assert not unlisted, f"{where}: {unlisted} not in {module}.__all__"


def test_the_docs_name_types_by_their_public_home() -> None:
    """Prose that sends a reader to a type names `kg` or `kg.types`, not the module it happens to live in."""
    import kg.types

    inner = re.compile(r"`kg\.(?:core|queries|ingest)\.[\w.]*\.(?P<name>[A-Z]\w*)`")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for match in inner.finditer(path.read_text(encoding="utf-8")):
            assert match["name"] not in kg.types.__all__, f"{path.name}: {match[0]} is kg.types.{match['name']}"


def test_the_old_langgraph_store_path_warns_and_names_the_new_one() -> None:
    pytest.importorskip("langgraph.store.base", reason="the langgraph extra is not installed")
    from kg.integrations.langgraph import KgStore

    sys.modules.pop("kg.langgraph_store", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("kg.langgraph_store")
    assert old.KgStore is KgStore
    [warning] = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert "kg.integrations.langgraph" in str(warning.message)
