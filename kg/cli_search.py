"""`kg search`: through a running `kg serve` when one answers (no model to load), else locally.
Every user string printed is escaped: Rich would read "psycopg[binary]" as markup."""

from __future__ import annotations

import os
from typing import Any, Sequence

import typer
from rich.markup import escape
from rich.table import Table

from kg.config import Settings, load_settings
from kg.models import TurnHit
from kg.terminal import NAMESPACE, console, err, run

METHODS = ("vector", "fulltext")


def print_hits(title: str, method: str, hits: Sequence[TurnHit]) -> None:
    table = Table(title=escape(f"{method}: {title}"), show_lines=False)
    for col in ("score", "session", "when", "speaker"):
        table.add_column(col, no_wrap=True)
    table.add_column("text", overflow="fold", ratio=1)
    for h in hits:
        t = h.turn
        text = t.text if len(t.text) < 160 else t.text[:157] + "..."
        table.add_row(f"{h.score:.3f}", escape(t.session_id), t.ts.strftime("%Y-%m-%d %H:%M"),
                      escape(t.speaker or t.role), escape(text))
    console.print(table)


def serve_url(settings: Settings) -> str:
    host = settings.http.host
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://{'[' + host + ']' if ':' in host else host}:{settings.http.port}"


def via_serve(settings: Settings, namespace: str, query: str, k: int, method: str) -> list[TurnHit] | None:
    """The hits from a running `kg serve` ([http] host and port), or None when none answers /health."""
    import httpx

    base = serve_url(settings)
    try:
        if httpx.get(f"{base}/health", timeout=0.5).status_code != 200:
            return None
    except httpx.HTTPError:
        return None
    key = os.environ.get("KG_API_KEY")
    err.print(f"searching through kg serve at {base}", highlight=False)
    try:
        r = httpx.get(f"{base}/v1/namespaces/{namespace}/search", params={"q": query, "k": k, "strategy": method},
                      headers={"X-API-Key": key} if key else {}, timeout=60)
    except httpx.HTTPError as exc:
        err.print(f"[red]error:[/] kg serve at {base} did not answer: {escape(str(exc))}")
        raise typer.Exit(2) from None
    if r.status_code != 200:
        body: Any = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        hint = " (set KG_API_KEY)" if r.status_code in (401, 403) else ""
        err.print(f"[red]error:[/] {r.status_code} {escape(str(body.get('message', r.text[:200])))}{hint}")
        raise typer.Exit(2)
    return [TurnHit.model_validate(h) for h in r.json()]


def search(
    query: str = typer.Argument(...),
    namespace: str = NAMESPACE,
    k: int = typer.Option(5, "--k", "-k", min=1, max=200),
    method: str = typer.Option("vector", "--method", "-m", help="vector or fulltext."),
    local: bool = typer.Option(False, "--local", help="Search in this process even when kg serve is up."),
) -> None:
    """Search the turns of a namespace (through a running `kg serve` when one is up: no model load)."""
    if method not in METHODS:
        err.print(f"[red]error:[/] unknown method {escape(repr(method))}; use vector or fulltext")
        raise typer.Exit(2)
    settings = load_settings()
    hits = None if local else via_serve(settings, namespace, query, k, method)
    if hits is None:
        from kg.memory import AsyncMemory

        async def go() -> list[TurnHit]:
            async with AsyncMemory(settings) as memory:
                return await memory.search_turns(namespace, query, k, method)  # type: ignore[arg-type]

        hits = run(go(), ValueError)
    print_hits(query, method, hits)
