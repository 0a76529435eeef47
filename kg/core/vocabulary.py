"""The words every door shares, defined once: how many results a search may ask for, the retrieval
recipes' names and the reranker kinds. No pydantic here: `kg --help` reads it. HTTP, MCP, the CLI, the facade and the settings read them
from here, so a door cannot drift (field limits are in `kg.core.models.limits`)."""

from __future__ import annotations

from typing import Literal, get_args

# `k` of every search (turns, sessions, memories, recall), at every door; out of range is refused, never clamped.
K_MIN, K_MAX = 1, 100
K_DOC = f"How many results ({K_MIN}..{K_MAX})."

RecipeName = Literal["flat", "bm25", "hybrid", "hierarchical"]
RECIPE_NAMES: tuple[str, ...] = get_args(RecipeName)
# Old names a caller may still pass; the hit names the recipe it resolved to.
RECIPE_ALIASES: dict[str, RecipeName] = {"vector": "flat", "fulltext": "bm25"}
RecipeChoice = Literal[RecipeName, "vector", "fulltext"]  # what a door accepts

# Who wrote: `trusted` (the default), `untrusted` (tool output, web pages, other agents' messages).
# What is extracted from untrusted content never ends, graduates or merges into a trusted statement
# until confirmed (docs/trust.md).
Trust = Literal["trusted", "untrusted"]
TRUST_LEVELS: tuple[str, ...] = get_args(Trust)

RerankerKind = Literal["none", "cross-encoder", "voyage", "llm"]
RERANKER_KINDS: tuple[str, ...] = get_args(RerankerKind)

# A statement asserts or retracts; where it comes from.
Op = Literal["assert", "retract"]
Source = Literal["stated", "observed", "inferred", "system"]
# How many values a predicate (or objects a relationship type) holds at once.
Cardinality = Literal["one", "many"]
# How two spellings of a value are compared.
ValueMatch = Literal["exact", "casefold"]
# An LLM provider: the API the transport speaks, and the shape of its messages in an imported history.
Provider = Literal["anthropic", "openai"]
# What a new correction does to the standing ones (ADD / UPDATE / DELETE / NOOP), and how it conflicts.
CorrectionAction = Literal["add", "reinforce", "invalidate", "noop"]
ConflictLink = Literal["supersedes", "contradicts"]
# What a framework door searches: the turns, or turns, facts and summaries in one ranking.
SearchKind = Literal["turns", "recall"]


def check_k(k: int) -> int:
    if not K_MIN <= k <= K_MAX:
        raise ValueError(f"k must be {K_MIN}..{K_MAX}, got {k}")
    return k
