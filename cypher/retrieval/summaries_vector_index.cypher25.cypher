// Current summaries of a large namespace by the HNSW index, filtered inside it to the namespace and
// `as_of` (Cypher 25 SEARCH); the expired versions are left out after it, so it reads $fetch.
// One row: [session_id, summary id] in rank order.
CYPHER 25
MATCH (sm:Summary)
  SEARCH sm IN (VECTOR INDEX summary_embedding FOR $vector
                WHERE sm.namespace = $namespace AND sm.started_at <= coalesce($as_of, datetime('9999-12-31T23:59:59Z'))
                LIMIT $fetch) SCORE AS score
WITH sm, round(score, 6) AS score
WHERE sm.expired_at IS NULL
ORDER BY score DESC, sm.id
LIMIT $k
RETURN collect([sm.session_id, sm.id]) AS hits
