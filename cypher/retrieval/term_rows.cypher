// The turns of some sessions with their key texts and no vectors, for the keyword-only cache of large
// namespaces (queries.vectors, vectors=False): rows as retrieval/vector_rows gives them, the three
// vector columns and the token vectors null.
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.session_id IN $sessions AND t.idx IS NOT NULL AND t.embedding IS NOT NULL
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond,
                coalesce(t.follows_question, false), null, null, null, t.role, t.key_text, t.context_text,
                size(t.text), null]) AS rows
