// Current summaries of a large namespace by the HNSW index, over-fetched then kept to the namespace.
// One row: [session_id, summary id] in rank order.
CALL db.index.vector.queryNodes('summary_embedding', $fetch, $vector) YIELD node AS sm, score
WHERE sm.namespace = $namespace AND sm.expired_at IS NULL AND ($as_of IS NULL OR sm.started_at <= $as_of)
WITH sm, score
ORDER BY score DESC
LIMIT $k
RETURN collect([sm.session_id, sm.id]) AS hits
