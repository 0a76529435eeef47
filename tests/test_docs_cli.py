"""Every `kg ...` command line shown in README.md and docs/ parses with the CLI's own parser (without
running it), and the MCP tool table in docs/mcp.md lists exactly the registered tools and their
arguments: a renamed option or argument breaks this test instead of a reader."""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from typing import Any, Iterator

import pytest
import typer.main

from kg.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `-n NS`, `QUERY` left out, a group named alone (`kg jobs`): a synopsis or a mention, not a call
PLACEHOLDER_ERRORS = {"BadParameter", "MissingParameter", "NoArgsIsHelpError"}


def shown_command_lines() -> Iterator[tuple[str, str]]:
    """(where, line) for each inline code span and each code-block line that starts with `kg `."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
        for block in blocks:
            for line in block.splitlines():
                line = line.split(" #", 1)[0].strip().removeprefix("$ ")
                if line.startswith("kg "):
                    yield path.name, line
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for span in re.findall(r"`(kg [^`]+)`", prose):
            yield path.name, span


def variants(line: str) -> list[list[str]]:
    """The argument lists a synopsis stands for: `a \\| b` alternatives, `x|y` choices, `[...]` optional
    parts included, `...` (more of the same) dropped."""
    line = line.replace("\\|", "|")
    first, *others = [part.strip() for part in line.split(" | ")]
    words = shlex.split(first)[1:]
    path = list(itertools.takewhile(lambda w: not w.startswith("-") and w.islower(), words))
    alternatives = [words]
    for other in others:
        rest = shlex.split(other)
        alternatives.append((path if rest[0].startswith("-") else path[:-1]) + rest)
    out = []
    for words in alternatives:
        tokens: list[list[str]] = []
        for word in words:
            word = word.strip("[]")
            if not word:
                continue
            if word == "...":
                if tokens and tokens[-1][0].startswith("-"):
                    tokens.append(["X"])  # `--uri ...`: some value
                continue
            tokens.append(word.split("|") if "|" in word and "://" not in word else [word])
        out.extend(list(choice) for choice in itertools.product(*tokens))
    return out


def parse_problem(argv: list[str]) -> str | None:
    """Why `kg <argv>` does not parse, or None."""
    command: Any = typer.main.get_command(app)
    args = list(argv)
    while args and hasattr(command, "commands") and args[0] in command.commands:
        command = command.commands[args.pop(0)]
    if hasattr(command, "commands") and args and not args[0].startswith("-"):
        return f"no command {args[0]!r} in {command.name!r}"
    try:
        command.make_context(command.name, list(args))  # the parser consumes the list it is given
    except Exception as exc:  # noqa: BLE001 - any parser error: its kind is sorted below
        kinds = {c.__name__ for c in type(exc).__mro__}
        if kinds & PLACEHOLDER_ERRORS:
            return None
        if "Exit" in kinds and getattr(exc, "exit_code", None) == 0:
            return None  # `--help` parsed: it prints the help and exits 0
        if "BadOptionUsage" in kinds and "requires an argument" in str(exc) and args and args[-1].startswith("-"):
            return None  # the option named on its own in prose (`kg index --session`)
        return f"{type(exc).__name__}: {exc}"
    return None


LINES = sorted(set(shown_command_lines()))


def test_the_docs_show_command_lines() -> None:
    assert len(LINES) > 50 and any("kg search" in line for _, line in LINES)


@pytest.mark.parametrize(("where", "line"), LINES, ids=[f"{w}:{line}" for w, line in LINES])
def test_a_command_line_in_the_docs_parses(where: str, line: str) -> None:
    for argv in variants(line):
        assert parse_problem(argv) is None, f"{where}: `{line}` as {argv}: {parse_problem(argv)}"


def test_a_wrong_option_is_caught() -> None:
    assert "No such option: -m" in (parse_problem(["search", "q", "-n", "ns", "-m", "vector"]) or "")
    assert parse_problem(["jobs", "nope"]) is not None
    assert parse_problem(["search", "q", "-n", "ns", "-r", "bm25"]) is None
    assert parse_problem(["--help"]) is None and parse_problem(["search", "--help"]) is None
    assert variants("kg reindex --stale \\| --since DATE \\| --session ID -n NS") == [
        ["reindex", "--stale"], ["reindex", "--since", "DATE"], ["reindex", "--session", "ID", "-n", "NS"]]
    assert ["forget", "subject", "NAME"] in variants("kg forget session ID \\| subject NAME \\| namespace -n NS")


def mcp_table() -> dict[str, set[str]]:
    """docs/mcp.md's tool table: tool -> the arguments it lists (the first name of each top-level item)."""
    table: dict[str, set[str]] = {}
    section = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8").split("## Tools", 1)[1]
    for row in re.findall(r"^\| `(\w+)` \| (.*?) \| .*\|$", section, flags=re.M):
        name, cell = row
        items, depth, current, in_code = [], 0, "", False
        for ch in cell.replace("\\|", "|"):
            in_code = not in_code if ch == "`" else in_code
            depth += (ch in "([{") - (ch in ")]}") if not in_code else 0
            if ch == "," and depth == 0 and not in_code:
                items.append(current)
                current = ""
            else:
                current += ch
        items.append(current)
        table[name] = {m.group(1) for item in items if (m := re.match(r"\s*`(\w+)`", item))}
    return table


async def test_the_mcp_tool_table_matches_the_registered_tools() -> None:
    pytest.importorskip("mcp", reason="the server extra is not installed")
    from mcp import Client

    from kg.mcp.server import LocalScope, build_server

    async with Client(build_server(LocalScope())) as client:
        registered = {t.name: set(t.input_schema["properties"]) for t in (await client.list_tools()).tools}
    documented = mcp_table()
    assert set(documented) == set(registered), (set(documented) ^ set(registered))
    wrong = {name: (documented[name], args) for name, args in registered.items() if documented[name] != args}
    assert not wrong, wrong
