"""Post-session extraction: a session's turns in, entities / facts / relationships / corrections /
decisions out, one structured answer per chunk.

- `models`: `ChunkInput` (what is read) and `ExtractionResult` (the answer) with their validators;
- the prompts (`extract-v1`, `session-v1`) are in `kg.ingest.prompts.extraction`, with every other one;
- `chunking`: one request per session, or overlapping chunks for long ones, and `merge`;
- `offline`: the deterministic, no-network extractor;
- `llm`: the instructor backends (Anthropic, OpenAI-compatible) and `extractor_for(settings)`;
- `extractor`: the `Extractor` protocol, `Usage`, `ExtractionFailed`.

Import from the submodules; this package keeps no re-exports so that reading models does not
load the LLM SDKs.
"""
