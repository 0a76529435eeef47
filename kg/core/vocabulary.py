"""The words every door shares, defined once: how many results a search may ask for, the names of the
retrieval recipes, and the kinds of rerank stage. HTTP, MCP, the CLI, the settings and the read
path all read them from here, so a door cannot promise what another refuses."""

from __future__ import annotations

from typing import Literal, get_args

K_MIN, K_MAX = 1, 100  # results a search may ask for; out of range is refused, not clamped
K_DOC = f"How many results ({K_MIN}..{K_MAX})."

RecipeName = Literal["flat", "bm25", "hybrid", "hierarchical"]
RecipeAlias = Literal["vector", "fulltext"]  # the old per-door search methods: flat and bm25
RecipeChoice = Literal[RecipeName, RecipeAlias]  # what a caller may ask for
ALIASES: dict[str, RecipeName] = {"vector": "flat", "fulltext": "bm25"}
RECIPE_NAMES: tuple[str, ...] = get_args(RecipeName)

RerankerKind = Literal["none", "cross-encoder", "voyage", "llm"]
RERANKER_KINDS: tuple[str, ...] = get_args(RerankerKind)
