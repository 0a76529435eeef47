"""One definition of each shared word (kg.core.vocabulary), and every door reads it: the `k` bounds,
the recipe names and the reranker kinds agree at HTTP, MCP, the CLI, the facade and the settings."""

from __future__ import annotations

from typing import Any, get_args

import pytest
import typer.main

from kg.core.settings.memory import RerankSettings, RetrievalSettings
from kg.core.settings.tree import Settings
from kg.core.vocabulary import K_MAX, K_MIN, RECIPE_ALIASES, RECIPE_NAMES, RERANKER_KINDS, RecipeChoice, check_k
from kg.queries.recipes import ALIASES, RECIPES, Recipe

SEARCHES = {"search", "search_sessions", "search_memories", "recall"}


def test_the_vocabulary_is_consistent() -> None:
    assert (K_MIN, K_MAX) == (1, 100)  # what docs/http.md and docs/mcp.md promise
    assert set(RECIPES) == set(RECIPE_NAMES) and ALIASES == RECIPE_ALIASES
    assert set(get_args(RecipeChoice)) == set(RECIPE_NAMES) | set(RECIPE_ALIASES)
    assert set(RECIPE_ALIASES.values()) <= set(RECIPE_NAMES)


def test_the_settings_accept_every_recipe_and_reranker_and_nothing_else() -> None:
    assert set(get_args(RetrievalSettings.model_fields["strategy"].annotation)) == set(RECIPE_NAMES)
    assert set(get_args(RerankSettings.model_fields["reranker"].annotation)) == set(RERANKER_KINDS)
    assert set(get_args(Recipe.model_fields["reranker"].annotation)) == set(RERANKER_KINDS)


def test_http_bounds_k_and_names_the_recipes() -> None:
    from kg.http import create_app

    schema = create_app(Settings()).openapi()
    seen = set()
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            for param in operation.get("parameters", []):
                if param["name"] == "k":
                    seen.add(operation["operationId"].split("_v1_")[0])
                    assert (param["schema"]["minimum"], param["schema"]["maximum"]) == (K_MIN, K_MAX), path
                if param["name"] == "strategy":
                    enum = param["schema"]["anyOf"][0]["enum"]
                    assert set(enum) == set(get_args(RecipeChoice)), path
    assert SEARCHES <= seen, seen


async def test_mcp_bounds_k_and_names_the_recipes() -> None:
    from mcp import Client

    from kg.mcp.server import LocalScope, build_server

    async with Client(build_server(LocalScope())) as client:
        tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
    with_k = {name: props["k"] for name, props in tools.items() if "k" in props}
    assert set(with_k) == {"search_turns", "search_sessions", "search_memories", "recall"}
    for name, k in with_k.items():
        assert (k["minimum"], k["maximum"]) == (K_MIN, K_MAX), name
    recipe: Any = tools["search_turns"]["recipe"]["anyOf"][0]
    assert set(recipe["enum"]) == set(get_args(RecipeChoice))


def test_the_cli_bounds_k() -> None:
    from kg.cli import app

    search = typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]
    [k] = [p for p in search.params if p.name == "k"]
    assert (k.min, k.max) == (K_MIN, K_MAX)


@pytest.mark.parametrize("k", [0, K_MAX + 1])
async def test_the_facade_refuses_k_out_of_range_before_touching_the_database(k: int) -> None:
    from kg.memory import AsyncMemory

    memory = AsyncMemory(Settings())  # never opened: the check comes first
    for search in (memory.search_turns, memory.search_sessions, memory.search_memories, memory.recall):
        with pytest.raises(ValueError, match=f"k must be {K_MIN}..{K_MAX}, got {k}"):
            await search("ns", "anything", k)
    assert check_k(K_MAX) == K_MAX
