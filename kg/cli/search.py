"""`kg search`: the turns that best answer a question, by the memory's retriever (every door runs
the same one); through a running `kg serve` when one answers (no model to load), else locally.
Every user string printed is escaped: Rich would read "psycopg[binary]" as markup."""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import TYPE_CHECKING, Any, Optional, Sequence

import typer
from rich.markup import escape
from rich.table import Table

from kg.cli.terminal import NAMESPACE, console, err, fail, instant, load_settings, run
from kg.core.vocabulary import K_DOC, K_MAX, K_MIN

if TYPE_CHECKING:  # imported where used: `kg --help` loads no model or settings tree
    from kg.core.models.recall import RankedTurn
    from kg.core.settings.tree import Settings


def print_hits(query: str, recipe: str, hits: Sequence[RankedTurn]) -> None:
    table = Table(title=escape(f"{recipe}: {query}"), show_lines=False)
    for col in ("score", "session", "when", "speaker"):
        table.add_column(col, no_wrap=True)
    table.add_column("text", overflow="fold", ratio=1)
    for h in hits:
        t = h.turn
        text = t.text if len(t.text) < 160 else t.text[:157] + "..."
        table.add_row(f"{h.score:.3f}", escape(t.session_id), t.ts.strftime("%Y-%m-%d %H:%M"),
                      escape(t.speaker or t.role), escape(text))
    console.print(table)
    degraded = next((h.degraded_reason for h in hits if h.degraded_reason), None)
    if degraded:  # the fallback embedder's vectors and BM25 answered, not the recipe (docs/retrieval.md)
        err.print(f"[yellow]degraded:[/] {escape(degraded)}")


def serve_url(settings: Settings) -> str:
    host = settings.http.host
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://{'[' + host + ']' if ':' in host else host}:{settings.http.port}"


def via_serve(settings: Settings, namespace: str, query: str, k: int, recipe: str | None,
              as_of: datetime | None = None, now: datetime | None = None) -> list[RankedTurn] | None:
    """The hits from a running `kg serve` ([http] host and port), or None when none answers /health."""
    import httpx

    from kg.core.models.recall import RankedTurn

    base = serve_url(settings)
    try:
        if httpx.get(f"{base}/health", timeout=0.5).status_code != 200:
            return None
    except httpx.HTTPError:
        return None
    key = os.environ.get("KG_API_KEY")
    err.print(f"searching through kg serve at {base}", highlight=False)
    params: dict[str, Any] = {"q": query, "k": k} | ({"strategy": recipe} if recipe else {}) | {
        name: value.isoformat() for name, value in (("as_of", as_of), ("now", now)) if value is not None}
    try:
        r = httpx.get(f"{base}/v1/namespaces/{namespace}/search", params=params,
                      headers={"X-API-Key": key} if key else {}, timeout=60)
    except httpx.HTTPError as exc:
        fail(f"kg serve at {base} did not answer: {str(exc)}")
    if r.status_code != 200:
        body: Any = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        hint = " (set KG_API_KEY)" if r.status_code in (401, 403) else ""
        fail(f"{r.status_code} {str(body.get('message', r.text[:200]))}{hint}")
    return [RankedTurn.model_validate(h) for h in r.json()]


def search(
    query: str = typer.Argument(...),
    namespace: str = NAMESPACE,
    k: int = typer.Option(5, "--k", "-k", min=K_MIN, max=K_MAX, help=K_DOC),
    recipe: Optional[str] = typer.Option(None, "--recipe", "-r", help="flat, bm25, hybrid or hierarchical; default "
                                         "the configured strategy (vector and fulltext: old names of flat and bm25)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Hide turns after this moment (ISO 8601)."),
    now: Optional[str] = typer.Option(None, "--now", help="When the question is asked (ISO 8601): 'last month' "
                                      "counts back from it; default --as-of, else the present."),
    as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
    local: bool = typer.Option(False, "--local", help="Search in this process even when kg serve is up."),
) -> None:
    """Search the turns of a namespace with the memory's retriever (through a running `kg serve` when
    one is up: no model load)."""
    from kg.queries.recipes import recipe as pick

    settings = load_settings()
    try:
        pick(recipe or settings.memory.retrieval.strategy)
    except ValueError as exc:
        fail(str(exc))
    hidden_after, asked = instant(as_of, "--as-of"), instant(now, "--now")
    hits = None if local else via_serve(settings, namespace, query, k, recipe, hidden_after, asked)
    if hits is None:
        from kg.memory import AsyncMemory

        async def go() -> list[RankedTurn]:
            async with AsyncMemory(settings) as memory:
                return await memory.search_turns(namespace, query, k, recipe, hidden_after, asked)

        hits = run(go(), ValueError)
    if as_json:
        print(json.dumps([h.model_dump(mode="json") for h in hits]))
    else:
        print_hits(query, hits[0].recipe if hits else (recipe or settings.memory.retrieval.strategy), hits)
