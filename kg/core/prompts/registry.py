"""The prompts, by name and by version: `prompt("session")` is the `Prompt` (version, builder,
response model, purpose) the write path asks now, `prompt("session-v1")` that exact version. Every
caller, on the write path and the read path, gets its prompt here. A new version of a prompt
replaces its entry in `PROMPTS`; the old one stays reachable by its version while stored ones use it."""

from __future__ import annotations

from kg.core.llm.asker import Prompt
from kg.core.prompts.dedup import ADJUDICATE, ADJUDICATE_BATCH
from kg.core.prompts.enrichment import QUALITY, SIGNALS
from kg.core.prompts.extraction import EXTRACT
from kg.core.prompts.judges import CLUSTER_LABEL, CORRECTION_AUDN, PREDICATE_CONTRADICTION
from kg.core.prompts.rerank import RERANK
from kg.core.prompts.session import SESSION
from kg.core.prompts.summaries import ROLLUP, SUMMARIZE

_ALL = (EXTRACT, SESSION, SUMMARIZE, ROLLUP, SIGNALS, QUALITY, ADJUDICATE, ADJUDICATE_BATCH, PREDICATE_CONTRADICTION,
        CORRECTION_AUDN, CLUSTER_LABEL, RERANK)
PROMPTS: dict[str, Prompt] = {p.name: p for p in _ALL}  # name -> the version in use
VERSIONS: dict[str, Prompt] = {p.version: p for p in _ALL}  # every version known


def prompt(key: str) -> Prompt:
    """The prompt in use named `key` (e.g. "session"), or the version `key` (e.g. "session-v1");
    a KeyError names the known ones."""
    found = PROMPTS.get(key) or VERSIONS.get(key)
    if found is None:
        raise KeyError(f"no prompt {key!r}; known: {', '.join(sorted(PROMPTS))}")
    return found


def versions() -> dict[str, str]:
    """name -> the version in use (what a stored `prompt_version` is compared with)."""
    return {name: p.version for name, p in PROMPTS.items()}
