// BM25 over current summaries (text, topics and entities); $query is escaped Lucene.
CALL db.index.fulltext.queryNodes('summary_text', $query) YIELD node AS sm, score
WHERE sm.namespace = $namespace AND sm.expired_at IS NULL AND ($as_of IS NULL OR sm.started_at <= $as_of)
RETURN sm.session_id AS session_id, sm.id AS id, sm.kind AS kind, score
LIMIT $k
