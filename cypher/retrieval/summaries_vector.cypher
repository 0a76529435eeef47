// Current summaries of a namespace by exact cosine (there are far fewer summaries than turns).
// One row: [session_id, summary id] in rank order.
MATCH (sm:Summary)
WHERE sm.namespace = $namespace AND sm.kind IS NOT NULL AND sm.expired_at IS NULL AND sm.embedding IS NOT NULL
  AND ($as_of IS NULL OR sm.started_at <= $as_of)
WITH sm, round(vector.similarity.cosine(sm.embedding, $vector), 6) AS score
ORDER BY score DESC, sm.id
LIMIT $k
RETURN collect([sm.session_id, sm.id]) AS hits
