// The fallback embedder's turns by its own HNSW index, filtered inside it to the namespace and
// `as_of` (Cypher 25 SEARCH), asked for $fetch and the best $k kept. One row, as retrieval/vector_index's.
CYPHER 25
MATCH (t:Turn)
  SEARCH t IN (VECTOR INDEX turn_fallback_embedding FOR $vector
               WHERE t.namespace = $namespace AND t.ts <= coalesce($as_of, datetime('9999-12-31T23:59:59Z'))
               LIMIT $fetch) SCORE AS score
WITH t, round(score, 6) AS score
ORDER BY score DESC, t.id
LIMIT $k
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                coalesce(t.follows_question, false), t.role, size(t.text),
                t.context_text IS NOT NULL]) AS rows
