// The fallback embedder's turns by its own HNSW index (kg.core.embedders.fallback), over-fetched
// ($fetch) then kept to the namespace. One row, as retrieval/vector_index's.
CALL db.index.vector.queryNodes('turn_fallback_embedding', $fetch, $vector) YIELD node AS t, score
WHERE t.namespace = $namespace AND ($as_of IS NULL OR t.ts <= $as_of)
WITH t, round(score, 6) AS score
ORDER BY score DESC, t.id
LIMIT $k
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                coalesce(t.follows_question, false), t.role, size(t.text),
                t.context_text IS NOT NULL]) AS rows
