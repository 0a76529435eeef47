"""Post-session extraction: a session's turns in, entities / facts / relationships / corrections /
decisions out, one structured answer per chunk.

- what extraction reads (`ChunkInput`) and answers (`ExtractionResult`, with its validators) sit
  beside their prompt `extract-v1` in `kg.core.prompts.extraction`; `session-v1` (`SessionAnswer`)
  is `kg.core.prompts.session`: one prompt library, with every other prompt and their registry;
- `session`: the session call, its answers kept on the session (`CachedExtractor`);
- `chunking`: one request per session, or overlapping chunks for long ones, and `merge`;
- `offline`: the deterministic, no-network extractor;
- `llm`: the instructor backends (Anthropic, OpenAI-compatible) and `extractor_for(settings)`;
- `extractor`: the `Extractor` protocol, `Usage`, `ExtractionFailed`.

Import from the submodules; this package keeps no re-exports so that reading models does not
load the LLM SDKs.
"""
