"""The prompts in use, by name: `PROMPTS["session"]` is the `Prompt` (version, builder, response
model, purpose) the write path asks now. A new version of a prompt replaces its entry here."""

from __future__ import annotations

from kg.ingest.prompts.dedup import ADJUDICATE, ADJUDICATE_BATCH
from kg.ingest.prompts.enrichment import QUALITY, SIGNALS
from kg.ingest.prompts.extraction import EXTRACT, SESSION
from kg.ingest.prompts.judges import CLUSTER_LABEL, CORRECTION_AUDN, PREDICATE_CONTRADICTION
from kg.ingest.prompts.rerank import RERANK
from kg.ingest.prompts.summaries import ROLLUP, SUMMARIZE
from kg.core.llm.asker import Prompt

PROMPTS: dict[str, Prompt] = {p.name: p for p in (
    EXTRACT, SESSION, SUMMARIZE, ROLLUP, SIGNALS, QUALITY, ADJUDICATE, ADJUDICATE_BATCH, PREDICATE_CONTRADICTION,
    CORRECTION_AUDN, CLUSTER_LABEL, RERANK)}


def prompt(name: str) -> Prompt:
    """The prompt in use named `name` (e.g. "session"); a KeyError names the known ones."""
    try:
        return PROMPTS[name]
    except KeyError:
        raise KeyError(f"no prompt {name!r}; known: {', '.join(sorted(PROMPTS))}") from None


def versions() -> dict[str, str]:
    """name -> the version in use (what a stored `prompt_version` is compared with)."""
    return {name: p.version for name, p in PROMPTS.items()}
