"""The session call: one structured answer per chunk holding the extraction AND the summary.

A closed session that fits `[memory.indexing] chunk_token_budget` is one chunk, so indexing and
summarizing it cost one LLM call (`session-v1`): the answer (`SessionAnswer`) is the extraction
(entities, facts, relationships, corrections, decisions) plus a `SummaryDraft` (the summary and the
session enrichment: topics, intent, outcome, complexity, quality). A longer session is cut into
chunks by the same budget; each chunk's answer carries its window summary, and the summaries
roll them up.

Indexing and summarizing run apart (two jobs, or `close_session` then `index_session`), so
`CachedExtractor` keeps each answer on the session (`(:Session)-[:HAS_ANSWER]->(:LLMAnswer)`),
keyed by the prompt version, the model and the chunk's turns: whichever step comes second reads
it instead of asking again.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any

from pydantic import Field

from kg.ingest.extraction.extractor import Usage
from kg.ingest.extraction.models import ChunkInput, ExtractionResult
from kg.ingest.extraction.prompts import _SYSTEM_V1 as _EXTRACT_SYSTEM_V1
from kg.ingest.extraction.prompts import Messages, Prompt, render_turns
from kg.ingest.summaries.models import SummaryDraft
from kg.core.store import Store

SESSION_V1 = "session-v1"


class SessionAnswer(ExtractionResult):
    """The memory items of the turns, and a summary of them."""

    summary: SummaryDraft = Field(description="A summary of these turns and what kind of session it was.")


_SYSTEM_V1 = _EXTRACT_SYSTEM_V1 + """

Also write `summary`, so that a later search for "what did we discuss about X?" finds this \
session and a reader can tell what happened without reading the turns:
- text: a faithful summary in 3 to 8 sentences, past tense, naming the speakers, the subjects \
discussed, what was decided and what was left open. Keep concrete names, numbers and dates.
- topics: up to 10 short topic tags, most central first.
- entities: people, organizations, products and places that are named.
- primary_intent: what the user mainly wanted, as one short phrase.
- outcome: success, partial_success, failure, abandoned, or ongoing.
- decisions: decisions the participants agreed on, one sentence each.
- complexity (0 trivial .. 1 very involved) and quality (0 unhelpful .. 1 excellent assistance).
Small talk gets a short summary."""


def session_v1(chunk: ChunkInput) -> Messages:
    """Messages asking for one `SessionAnswer` for `chunk`."""
    part = ""
    if chunk.chunk_count > 1:
        part = (f" This is part {chunk.chunk_index + 1} of {chunk.chunk_count}; parts overlap by a few turns, so"
                " repeating an item seen in the overlap is fine. Summarize this part only.")
    user = (f"Conversation session {chunk.session_id}.{part}\n\n{render_turns(chunk)}\n\n"
            "Extract the memory items from these turns and summarize them.")
    return [{"role": "system", "content": _SYSTEM_V1}, {"role": "user", "content": user}]


SESSION = Prompt(SESSION_V1, session_v1, SessionAnswer, "session")


def answer_key(chunk: ChunkInput, model: str, prompt_version: str) -> str:
    """What an answer depends on: the prompt, the model, the part and the turns as sent."""
    h = hashlib.sha256(f"{prompt_version}\x1f{model}\x1f{chunk.chunk_index}/{chunk.chunk_count}".encode())
    for t in chunk.turns:
        h.update(f"\x1e{t.id}\x1f{t.text}".encode())
    return h.hexdigest()[:32]


class CachedExtractor:
    """An LLM extractor asking `SESSION`, its answers kept on the session for the other step."""

    def __init__(self, extractor: Any, store: Store) -> None:
        self.inner = extractor
        self.store = store
        self.backend, self.model, self.prompt_version = extractor.backend, extractor.model, SESSION.version

    async def answer(self, chunk: ChunkInput) -> tuple[SessionAnswer, Usage]:
        key = answer_key(chunk, self.model, SESSION.version)
        rows = await self.store.read("queries/session_answer_get", namespace=chunk.namespace,
                                     session_id=chunk.session_id, key=key)
        if rows and rows[0]["answer"]:
            return SessionAnswer.model_validate_json(rows[0]["answer"], context=chunk.validation_context()), Usage()
        answer, usage = await self.inner.ask_chunk(chunk, SESSION)
        await self.store.write("queries/session_answer_put", namespace=chunk.namespace, session_id=chunk.session_id,
                               key=key, answer=json.dumps(answer.model_dump(mode="json")),
                               now=datetime.now(timezone.utc))
        return answer, usage

    async def extract(self, chunk: ChunkInput) -> tuple[ExtractionResult, Usage]:
        answer, usage = await self.answer(chunk)
        return answer, usage

    async def aclose(self) -> None:
        await self.inner.aclose()


def session_extractor_for(settings: Any, store: Store) -> Any:
    """Indexing's extractor: the session call (cached on the session) when an LLM is configured,
    else the offline extractor."""
    from kg.ingest.extraction.llm import LLMExtractor, extractor_for  # loads the LLM SDKs

    extractor = extractor_for(settings)
    return CachedExtractor(extractor, store) if isinstance(extractor, LLMExtractor) else extractor
