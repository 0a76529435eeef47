// Current summaries of a large namespace by the HNSW index, over-fetched then kept to the namespace.
CALL db.index.vector.queryNodes('summary_embedding', $fetch, $vector) YIELD node AS sm, score
WHERE sm.namespace = $namespace AND sm.expired_at IS NULL AND ($as_of IS NULL OR sm.started_at <= $as_of)
RETURN sm.session_id AS session_id, sm.id AS id, sm.kind AS kind, score
ORDER BY score DESC
LIMIT $k
