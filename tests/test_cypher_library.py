"""The Cypher library of `cypher/`: one folder per domain (`cypher/turns/write.cypher`, run as
`store.read("turns/write")`). Every statement name the code passes resolves to a file, and every
file of the library is run by some code. Pure: the names are read from the sources, statically.

A name is a string literal `<folder>/<name>` whose folder is one of `cypher/`'s, or any
`<word>/<word>` literal passed first to a statement runner (`read`, `write`, `run`, `load`, ...).
Names are spelled out whole: an f-string that builds one is refused, so this test sees them all.
`migrations/`, `schema/` and `browser/` have their loaders and checks of their own
(`kg.cypher.migrations`, `tests/test_schema.py`, `tests/test_browser_queries.py`): their names must
resolve, but their files need no literal user here."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CYPHER = REPO / "cypher"
OWN_LOADERS = {"migrations", "schema", "browser"}
SOURCES = ("kg", "ingest", "queries", "bench", "tests")
RUNNERS = {"read", "read_row", "write", "autocommit", "run", "rows", "load", "variant", "statements"}
NAME = re.compile(r"[a-z0-9_]+/[a-z0-9_.]+")
DOC_PATH = re.compile(r"cypher/[a-z0-9_/.]+?\.cypher\b")
ABSENT = {"turns/does_not_exist"}  # tests/test_schema.py: `load` refuses a name with no file


def folders() -> set[str]:
    return {p.name for p in CYPHER.iterdir() if p.is_dir() and not p.name.startswith("__")}


def files() -> dict[str, Path]:
    """Every statement file by its name (`turns/write`; a Cypher 25 variant as `x/y.cypher25`)."""
    return {p.relative_to(CYPHER).as_posix()[: -len(".cypher")]: p for p in CYPHER.rglob("*.cypher")}


def sources() -> list[Path]:
    here = Path(__file__).resolve()
    return [p for root in SOURCES for p in sorted((REPO / root).rglob("*.py"))
            if p.resolve() != here and "__pycache__" not in p.parts]


def names_in(path: Path, domains: set[str]) -> tuple[set[str], list[str]]:
    """(the statement names `path` spells out, the f-strings that would build one)."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found: set[str] = set()
    built: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if NAME.fullmatch(node.value) and node.value.split("/")[0] in domains:
                found.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            head = node.values[0] if node.values else None
            if (isinstance(head, ast.Constant) and isinstance(head.value, str)
                    and head.value.split("/")[0] in domains and "/" in head.value):
                built.append(f"{path.relative_to(REPO)}:{node.lineno}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNNERS:
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and NAME.fullmatch(first.value):
                found.add(first.value)
    return found, built


@cache
def used() -> tuple[dict[str, set[str]], list[str]]:
    """name -> the files that spell it, and every f-string that builds a name."""
    domains = folders()
    by_name: dict[str, set[str]] = defaultdict(set)
    built: list[str] = []
    for path in sources():
        found, dynamic = names_in(path, domains)
        for name in found:
            by_name[name].add(str(path.relative_to(REPO)))
        built += dynamic
    return by_name, built


def test_every_name_the_code_runs_is_a_file() -> None:
    by_name, _ = used()
    have = files()
    unknown = {name: sorted(where) for name, where in by_name.items() if name not in have and name not in ABSENT}
    assert not unknown, f"statement names with no cypher/<name>.cypher: {unknown}"


def test_no_statement_name_is_built_at_run_time() -> None:
    _, built = used()
    assert not built, f"statement names built from pieces (spell them out whole): {built}"


def test_every_file_of_the_library_is_run_by_some_code() -> None:
    by_name, _ = used()
    library = [n for n in files() if n.split("/")[0] not in OWN_LOADERS]
    unused = sorted(n for n in library if n.removesuffix(".cypher25") not in by_name)
    assert not unused, f"cypher/ files no code runs: {unused}"


def test_the_library_is_one_folder_per_domain() -> None:
    stray = sorted(p.name for p in CYPHER.iterdir() if p.is_file() and p.suffix != ".py")
    assert not stray, f"statement files outside a domain folder: {stray}"
    nested = sorted(n for n in files() if n.count("/") != 1)
    assert not nested, f"one level of folders: {nested}"
    have = files()
    orphans = sorted(n for n in have if n.endswith(".cypher25") and n.removesuffix(".cypher25") not in have)
    assert not orphans, f"Cypher 25 variants with no Cypher 5 form beside them: {orphans}"


def test_the_docs_name_files_that_exist() -> None:
    have = files()
    missing = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for match in DOC_PATH.finditer(doc.read_text("utf-8")):
            name = match.group(0).removeprefix("cypher/").removesuffix(".cypher")
            if name not in have:
                missing.append(f"{doc.relative_to(REPO)}: {match.group(0)}")
    assert not missing, f"the docs name cypher/ files that do not exist: {missing}"
