"""The docs are tested: every `kg ...` command line they show parses with the real CLI (options,
arguments, choices: without running the command), and the MCP tool table of docs/mcp.md lists
exactly the registered tools with their arguments. A renamed option or argument then breaks a test
instead of a reader."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# what a synopsis's placeholders stand for, as a user would type them
SAMPLES = {"NS": "acme", "NAMESPACE": "acme", "QUERY": "which database?", "ID": "s1", "SUBJECT": "Maya",
           "NAME": "Maya", "PRED": "lives_in", "T": "2024-03-01", "DATE": "2024-03-01", "N": "5", "S": "5",
           "STATUS": "active", "KIND": "index_session", "TARGET": "s1", "FILE": "README.md", "PREFIX": "locomo",
           "G": "group-1", "URI": "bolt://127.0.0.1:7687", "BACKEND": "offline", "H": "127.0.0.1", "P": "8765", "bolt://...": "bolt://127.0.0.1:7687",
           "demo-serve-...": "demo-serve-1"}


def _commands() -> list[tuple[str, str]]:
    """(page, command line) of every `kg ...` code span and code-block line in the docs."""
    found = []
    for page in DOCS:
        text = page.read_text("utf-8")
        spans = re.findall(r"`(kg [^`]+)`", text)
        blocks = [line.strip().removeprefix("$ ") for block in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", text, re.S)
                  for line in block.splitlines() if line.strip().removeprefix("$ ").startswith("kg ")]
        found += [(page.name, c.split("  #")[0].split(" # ")[0].strip()) for c in spans + blocks]
    return sorted(set(found))


def _variants(synopsis: str) -> list[list[str]]:
    """The concrete command lines a synopsis stands for: each alternative (`a|b`, or ` | ` between
    option groups after the command), every `[optional]` part in, placeholders replaced by
    samples, `...` dropped."""
    text = synopsis.replace("\\|", "|")
    text = re.sub(r"\[([^\[\]]*)\]", r"\1", text)  # optional parts: shown, so they must parse too
    head, *others = text.split(" | ")
    command = list(itertools.takewhile(lambda w: not w.startswith("-"), head.split()))
    branches = [head.split()] + [command + other.split() for other in others]
    out = []
    for words in branches:
        words = [w for w in words if w not in ("...", "kg")]
        choices = [w.split("|") if "|" in w and not w.startswith("-") else [w] for w in words]
        out += [[SAMPLES.get(w, w) for w in combo if w] for combo in itertools.product(*choices)]
    return out


def _reference(synopsis: str) -> bool:
    """A mention of a command or option in the prose (`kg jobs`, `kg index --session`), not a line to
    run: no placeholder, no optional part."""
    return not re.search(r"[\[\]]|\b[A-Z]{1,}\b", synopsis)


def _parse(args: list[str], reference: bool = False) -> None:
    """Parse `kg ARGS` down to the leaf command, as the CLI would, without invoking it. A reference
    only has to name commands and options that exist. (Typer ships its own copy of click: the
    objects are used by what they do, not by click's classes.)"""
    from kg.cli.app import app

    command = typer.main.get_command(app)
    if reference:
        names = [a for a in args if not a.startswith("-")]
        ctx = command.make_context("kg", [], resilient_parsing=True)
        while hasattr(command, "get_command") and names:
            sub = command.get_command(ctx, names[0])
            assert sub is not None, f"no command {names[0]!r}"
            command, names = sub, names[1:]
        options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        assert {a for a in args if a.startswith("-")} <= options, f"no such option among {sorted(options)}"
        return
    ctx = command.make_context("kg", list(args), resilient_parsing=False)
    while hasattr(command, "get_command"):
        rest = [*(getattr(ctx, "protected_args", None) or getattr(ctx, "_protected_args", [])), *ctx.args]
        if not rest:
            break
        name, *rest = rest
        sub = command.get_command(ctx, name)
        assert sub is not None, f"no command {name!r}"
        command, ctx = sub, sub.make_context(name, rest, parent=ctx, resilient_parsing=False)


def test_the_docs_show_commands() -> None:
    assert len(_commands()) > 40


@pytest.mark.parametrize(("page", "synopsis"), _commands())
def test_every_kg_command_in_the_docs_parses(page: str, synopsis: str) -> None:
    for args in _variants(synopsis):
        try:
            _parse(args, _reference(synopsis))
        except Exception as exc:  # the CLI's usage errors (typer's own click), or no such command
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            pytest.fail(f"{page}: `{synopsis}` as {args}: {message}")


def _mcp_table() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "mcp.md").read_text("utf-8")
    table = text[text.index("| tool | arguments"):]
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("| `"):
            break
        name, arguments = line.split(" | ")[0:2]
        # the arguments are the backticked names before any parenthesis of defaults or values
        names = re.findall(r"(?:^|, )`(\w+)`", re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", "", arguments))
        rows[name.strip("| `")] = set(names)
    return rows


async def test_the_mcp_tool_table_matches_the_tools() -> None:
    from kg.mcp.server import LocalScope, build_server

    tools = {t.name: set(t.input_schema.get("properties", {})) for t in await build_server(LocalScope()).list_tools()}
    assert _mcp_table() == tools
