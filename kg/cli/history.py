"""A user's history, brought in and kept up: `kg import claude-code | chatgpt | messages` read
existing transcripts and exports into sessions (docs/import.md), and `kg hook claude-code` is what a
coding agent's hooks run to record each prompt and answer as it happens (docs/coding-agents.md,
examples/claude-code-plugin/)."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer
from rich.markup import escape

from kg.cli.terminal import NAMESPACE, err, fail, instant, report_ingest, run

TOOLS = typer.Option(True, "--tools/--no-tools",
                     help="Tool calls and their results as attachments of the answers (--no-tools: left out).")


def import_claude_code(
    path: Path = typer.Argument(..., exists=True, help="A session file (<session id>.jsonl) or a project folder of "
                                "them (~/.claude/projects/<project>)."),
    namespace: str = NAMESPACE,
    tools: bool = TOOLS,
) -> None:
    """Import Claude Code transcripts: a session per file, with its id and times. Bad lines are reported
    with file:line (exit 1) and the rest go in; importing again writes nothing new."""
    from kg.memory import AsyncMemory

    async def go() -> Any:
        async with AsyncMemory() as memory:
            return await memory.import_claude_code(namespace, path, tools)

    report_ingest(run(go(), ValueError, OSError))


def import_chatgpt(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="conversations.json of a ChatGPT data export."),
    namespace: str = NAMESPACE,
    tools: bool = TOOLS,
) -> None:
    """Import ChatGPT's conversations (the branch each one was left on): a session per conversation,
    with its id; turns keep their messages' ids and times. Bad conversations are reported (exit 1)."""
    from kg.memory import AsyncMemory

    async def go() -> Any:
        async with AsyncMemory() as memory:
            return await memory.import_chatgpt(namespace, file, tools)

    report_ingest(run(go(), ValueError, OSError))


def import_messages(
    file: Path = typer.Argument(..., exists=True, dir_okay=False,
                                help="Messages: a JSON list, {messages: [...]}, a list of those, or JSON Lines."),
    fmt: str = typer.Option(..., "--format", "-f", help="openai or anthropic."),
    namespace: str = NAMESPACE,
    session_id: Optional[str] = typer.Option(None, "--session-id", "-s",
                                             help="Of a conversation without an id of its own; default the file's name."),
    start: Optional[str] = typer.Option(None, "--start", help="ISO 8601: when a conversation without times began; "
                                        "default the file's modification time (messages follow a second apart)."),
    tools: bool = TOOLS,
) -> None:
    """Import plain message lists in OpenAI's or Anthropic's shape. Bad messages are reported (exit 1)."""
    from kg.memory import AsyncMemory

    if fmt not in ("openai", "anthropic"):
        fail(f"--format: {fmt!r} is not openai or anthropic")
    began = instant(start, "--start")

    async def go() -> Any:
        async with AsyncMemory() as memory:
            return await memory.import_messages(namespace, file, fmt, session_id, began, tools)  # type: ignore[arg-type]

    report_ingest(run(go(), ValueError, OSError))


# -- hooks --------------------------------------------------------------------------------------
hook_app = typer.Typer(help="What an agent host's hooks run: each prompt and answer recorded as it happens.",
                       no_args_is_help=True, rich_markup_mode=None)
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")


@hook_app.command("claude-code")
def hook_claude_code(
    namespace: str = NAMESPACE,
    local: bool = typer.Option(False, "--local", help="Write in this process even when kg serve is up."),
) -> None:
    """Handle one Claude Code hook: its JSON on standard input. UserPromptSubmit records the prompt and
    Stop the answer, as turns of the session named by Claude Code's session id; SessionEnd closes the
    session (its summary now; `kg serve`'s jobs index it); SessionStart prints the namespace's rules,
    which Claude Code adds to the session's context. Other events change nothing. Through a running
    `kg serve` when one answers, else in this process. A failure exits 1: Claude Code shows it and goes on."""
    from kg.core.models.limits import session_id_problem

    try:
        payload = json.loads(sys.stdin.read() or "null")
    except json.JSONDecodeError as exc:
        _hook_fail(f"the hook's input is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    if not isinstance(payload, dict):
        _hook_fail("the hook's input is not a JSON object")
    event, session_id = payload.get("hook_event_name"), payload.get("session_id")
    if event not in EVENTS:
        return
    if not isinstance(session_id, str) or session_id_problem(session_id):
        _hook_fail(f"session_id: {session_id!r} is not a session id")
    work = _work(event, payload)
    if work is None:
        return
    try:
        printed = run(_hook(namespace, session_id, work, local), ValueError, ConnectionError, PermissionError)
    except typer.Exit as stop:
        raise typer.Exit(1 if stop.exit_code else 0) from None  # never 2: Claude Code reads 2 as "block the prompt"
    if printed:
        sys.stdout.write(printed + "\n")


def _work(event: str, payload: dict[str, Any]) -> tuple[str, str] | None:
    """(what to do, the text) of an event; None: nothing to record."""
    if event == "UserPromptSubmit":
        prompt = payload.get("prompt")
        return ("user", prompt) if isinstance(prompt, str) and prompt.strip() else None
    if event == "Stop":
        answer = _answer(payload)
        return ("assistant", answer) if answer else None
    return ("close", "") if event == "SessionEnd" else ("rules", "")


def _answer(payload: dict[str, Any]) -> str | None:
    """The answer that just ended: `last_assistant_message`, or (from Claude Code versions without it)
    the last answer of the transcript."""
    text = payload.get("last_assistant_message")
    if isinstance(text, str) and text.strip():
        return text
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not Path(path).is_file():
        return None
    from kg.core.models.turns import Message
    from kg.ingest.history.claude_code import read_claude_code

    turns = [m for m in read_claude_code(Path(path).read_bytes(), path, "hook", tools=False) if isinstance(m, Message)]
    return turns[-1].text if turns and turns[-1].role == "assistant" else None


async def _hook(namespace: str, session_id: str, work: tuple[str, str], local: bool) -> str | None:
    from kg.cli.search import serve_url
    from kg.core.settings.tree import load_settings
    from kg.memory import AsyncMemory

    settings = load_settings()
    door: Any = None if local else _serving(serve_url(settings))
    async with door or AsyncMemory(settings) as memory:
        what, text = work
        if what in ("user", "assistant"):
            await memory.add_message(namespace, what, text, ts=datetime.now(timezone.utc), session_id=session_id)
        elif what == "close":
            await memory.close_session(namespace, session_id)
        else:
            try:
                rules = await memory.core_rules(namespace)
            except KeyError:  # kg serve: a namespace that holds nothing yet
                return None
            return rules.render() if rules.rules else None
    return None


def _serving(base: str) -> Any:
    """A client of the `kg serve` at `base` when its /health answers, else None."""
    import os

    import httpx

    from kg import AsyncClient

    try:
        if httpx.get(f"{base}/health", timeout=0.5).status_code != 200:
            return None
    except httpx.HTTPError:
        return None
    return AsyncClient(base, api_key=os.environ.get("KG_API_KEY"))


def _hook_fail(message: str) -> NoReturn:
    err.print(f"[red]error:[/] {escape(message)}")
    raise typer.Exit(1)
