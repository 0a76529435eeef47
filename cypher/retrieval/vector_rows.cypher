// The turns of some sessions with their vectors and key texts, for the in-memory cache (queries.vectors):
// one row whose `rows` lists [id, session_id, idx, speaker, ts in epoch µs, follows_question, embedding,
// context_embedding, passage_embeddings, role, key_text, context_text, characters of its text, late_tokens]
// (one record instead of thousands).
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.session_id IN $sessions AND t.idx IS NOT NULL AND t.embedding IS NOT NULL
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond,
                coalesce(t.follows_question, false), t.embedding, t.context_embedding, t.passage_embeddings,
                t.role, t.key_text, t.context_text, size(t.text), t.late_tokens]) AS rows
