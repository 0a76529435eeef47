"""`kg search`: the turns that best answer a question, by the memory's retriever (every door runs
the same one)."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from kg.config import load_settings
from kg.memory import AsyncMemory
from kg.recall_models import RankedTurn
from kg.terminal import console, err, run


def search(
    query: str = typer.Argument(...),
    namespace: str = typer.Option(..., "--namespace", "-n"),
    k: int = typer.Option(5, "--k", "-k", min=1, max=200),
    recipe: Optional[str] = typer.Option(None, "--recipe", "-r", help="flat, bm25, hybrid or hierarchical; default "
                                         "the configured strategy (vector and fulltext: old names of flat and bm25)."),
    as_json: bool = typer.Option(False, "--json", help="Print the hits as JSON."),
) -> None:
    """Search the turns of a namespace with the memory's retriever."""
    from queries.recipes import recipe as pick

    try:
        pick(recipe or load_settings().memory.retrieval.strategy)
    except ValueError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None

    async def go() -> None:
        async with AsyncMemory() as memory:
            hits = await memory.search_turns(namespace, query, k, recipe)
        if as_json:
            print(json.dumps([h.model_dump(mode="json") for h in hits]))
        else:
            print_hits(query, hits[0].recipe if hits else (recipe or "default"), hits)

    run(go())


def print_hits(query: str, recipe: str, hits: list[RankedTurn]) -> None:
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
