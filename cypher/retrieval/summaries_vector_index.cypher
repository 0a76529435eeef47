// Current summaries of a large namespace by the HNSW index, over-fetched then kept to the namespace.
// One row: [session_id, summary id] in rank order.
CALL db.index.vector.queryNodes('summary_embedding', $fetch, $vector) YIELD node AS sm, score
WHERE sm.namespace = $namespace AND sm.expired_at IS NULL AND ($as_of IS NULL OR sm.started_at <= $as_of)
WITH sm, round(score, 6) AS score
ORDER BY score DESC, sm.id
LIMIT $k
RETURN collect([sm.session_id, sm.id]) AS hits
