"""Every versioned LLM prompt, of the write path and the read path, in one home: pure functions
from their inputs to chat messages, each paired with the pydantic model of its answer in a
`kg.core.llm.asker.Prompt`, and asked through the one transport (`kg.core.llm.transport`). The version is
stored on what a prompt produced, so reindexing knows what is stale: change the wording, bump the
version. Callers get a prompt from the registry, `registry.prompt("session")` (the version in use)
or `registry.prompt("session-v1")`, never by importing it.

- `extraction`: `extract-v1`, with what extraction reads (`ChunkInput`) and answers (`ExtractionResult`);
- `session`: `session-v1` (the session call: extraction, summary, enrichment; `SessionAnswer`);
- `summaries`: `summarize-v1`, `rollup-v1` (`SummaryDraft`, and `Part`, what a rollup reads);
- `enrichment`: `signals-v1`, `quality-v1` (passes 2 and 3 of `[memory.indexing] passes = 3`);
- `dedup`: `adjudicate-v1`, `adjudicate-batch-v1`;
- `judges`: `predicate-contradiction-v1`, `correction-audn-v1`, `cluster-label-v1`;
- `rerank`: `rerank-v1` (the read path's LLM reranker, `kg.queries.rerank`).

`registry.PROMPTS` maps each prompt's name to the version in use; this package keeps no
re-exports, so importing one prompt module does not import them all.
"""
