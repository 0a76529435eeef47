// Approximate (HNSW) search of the vector index $index, filtered inside the index to the namespace and
// `as_of` (Cypher 25 SEARCH, 2026.02 and later): the index answers as if it held only this tenant's
// turns: it is asked for $fetch (a few times $k: HNSW's candidate list grows with it,
// kg.queries.candidates.index_fetch) and the best $k are kept. The index name
// cannot be a parameter of SEARCH: one branch per turn index, and only the one named runs (the
// fallback embedder's index, which exists only with a fallback, is retrieval/fallback_vector_index).
// One row whose `rows` lists [id, session_id, idx, speaker, ts in epoch µs, score,
// follows_question, role, characters of its text, whether it has a context key] in rank order.
CYPHER 25
CALL () {
  FILTER $index = 'turn_embedding'
  MATCH (t:Turn)
    SEARCH t IN (VECTOR INDEX turn_embedding FOR $vector
                 WHERE t.namespace = $namespace AND t.ts <= coalesce($as_of, datetime('9999-12-31T23:59:59Z'))
                 LIMIT $fetch) SCORE AS score
  RETURN t, score
  UNION ALL
  FILTER $index = 'turn_context_embedding'
  MATCH (t:Turn)
    SEARCH t IN (VECTOR INDEX turn_context_embedding FOR $vector
                 WHERE t.namespace = $namespace AND t.ts <= coalesce($as_of, datetime('9999-12-31T23:59:59Z'))
                 LIMIT $fetch) SCORE AS score
  RETURN t, score
}
WITH t, round(score, 6) AS score
ORDER BY score DESC, t.id
LIMIT $k
RETURN collect([t.id, t.session_id, t.idx, t.speaker, t.ts.epochSeconds * 1000000 + t.ts.microsecond, score,
                coalesce(t.follows_question, false), t.role, size(t.text),
                t.context_text IS NOT NULL]) AS rows
