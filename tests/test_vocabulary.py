"""One definition of each shared word (`kg.core.vocabulary`): every door offers the same `k` range, the
same recipe names and the same reranker kinds."""

from __future__ import annotations

from typing import get_args

from kg.core.config import Settings
from kg.core.memory_settings import RerankSettings, RetrievalSettings
from kg.core.vocabulary import ALIASES, K_MAX, K_MIN, RECIPE_NAMES, RERANKER_KINDS, RecipeChoice
from kg.queries.recipes import RECIPES


async def test_every_door_offers_the_same_k_and_recipes() -> None:
    from kg.cli.search import search
    from kg.http import create_app
    from kg.mcp.server import LocalScope, build_server

    assert set(RECIPES) == set(RECIPE_NAMES) and set(ALIASES.values()) <= set(RECIPE_NAMES)
    assert set(get_args(RetrievalSettings.model_fields["strategy"].annotation)) == set(RECIPE_NAMES)
    assert set(get_args(RerankSettings.model_fields["reranker"].annotation)) == set(RERANKER_KINDS)

    openapi = create_app(Settings()).openapi()
    ks = [(p["schema"]["minimum"], p["schema"]["maximum"]) for path in openapi["paths"].values()
          for op in path.values() for p in op.get("parameters", []) if p["name"] == "k"]
    assert ks and set(ks) == {(K_MIN, K_MAX)}
    strategies = [p["schema"] for p in openapi["paths"]["/v1/namespaces/{namespace}/search"]["get"]["parameters"]
                  if p["name"] == "strategy"]
    choices = set(RECIPE_NAMES) | set(ALIASES)
    assert set(strategies[0]["anyOf"][0]["enum"]) == choices
    assert set(get_args(RecipeChoice)) == choices

    tools = await build_server(LocalScope()).list_tools()
    mcp_ks = [(t.input_schema["properties"]["k"]["minimum"], t.input_schema["properties"]["k"]["maximum"])
              for t in tools if "k" in t.input_schema.get("properties", {})]
    assert mcp_ks and set(mcp_ks) == {(K_MIN, K_MAX)}

    import inspect
    option = inspect.signature(search).parameters["k"].default
    assert (option.min, option.max) == (K_MIN, K_MAX)
