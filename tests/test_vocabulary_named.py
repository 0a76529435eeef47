"""Typed once: a vocabulary that has a name (`Name = Literal[...]`) is written by that name wherever it
is used, never as the same `Literal[...]` again (read from the sources, no import)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p for folder in ("kg", "ingest", "queries") for p in (ROOT / folder).rglob("*.py")]


def _words(node: ast.expr) -> frozenset[object] | None:
    """The values of `Literal[...]` written at `node`, or None when it is something else."""
    if not (isinstance(node, ast.Subscript) and getattr(node.value, "id", getattr(node.value, "attr", None)) == "Literal"):
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not all(isinstance(i, ast.Constant) for i in items):
        return None
    return frozenset(i.value for i in items)  # type: ignore[attr-defined]


def _literals() -> tuple[dict[frozenset[object], str], list[tuple[str, int, frozenset[object]]]]:
    named: dict[frozenset[object], str] = {}
    inline: list[tuple[str, int, frozenset[object]]] = []
    for path in SOURCES:
        tree = ast.parse(path.read_text())
        aliases = {id(n.value) for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                   and isinstance(getattr(n, "targets", [getattr(n, "target", None)])[0], ast.Name)
                   and _words(n.value) is not None and not isinstance(n, ast.AnnAssign)}
        for node in ast.walk(tree):
            words = _words(node)  # type: ignore[arg-type]
            if words is None or len(words) < 2:
                continue
            if id(node) in aliases:
                named.setdefault(words, f"{path.relative_to(ROOT)}")
            else:
                inline.append((str(path.relative_to(ROOT)), node.lineno, words))  # type: ignore[attr-defined]
    return named, inline


def test_a_named_vocabulary_is_written_by_its_name() -> None:
    named, inline = _literals()
    retyped = [f"{path}:{line} writes {sorted(map(str, words))}: named in {named[words]}"
               for path, line, words in inline if words in named]
    assert retyped == []


def test_one_vocabulary_is_written_inline_once() -> None:
    _, inline = _literals()
    seen: dict[frozenset[object], list[str]] = {}
    for path, line, words in inline:
        seen.setdefault(words, []).append(f"{path}:{line}")
    assert {sorted(map(str, w))[0]: places for w, places in seen.items() if len(places) > 1} == {}


def test_the_check_sees_a_retyped_vocabulary() -> None:
    tree = ast.parse('Source = Literal["a", "b"]\ndef f(x: Literal["b", "a"]) -> None: ...')
    found = [_words(n) for n in ast.walk(tree) if _words(n) is not None]  # type: ignore[arg-type]
    assert found == [frozenset({"a", "b"}), frozenset({"a", "b"})]
