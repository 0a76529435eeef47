// BM25 over current summaries (text, topics and entities) of one namespace; $query is escaped Lucene
// scoped to the namespace by queries.turns.scoped (unless it is the index's only tenant; the WHERE
// checks it either way). $options, `raw` and `floor` as in retrieval/fulltext.
// One row: [session_id, summary id, score] in rank order.
CALL db.index.fulltext.queryNodes('summary_text', $query, $options) YIELD node, score
WITH count(*) AS raw, min(score) AS floor, collect([node, score]) AS found
CALL (found) {
  UNWIND found AS hit
  WITH hit[0] AS sm, hit[1] AS score
  WHERE score > 0 AND sm.namespace = $namespace AND sm.expired_at IS NULL
    AND ($as_of IS NULL OR sm.started_at <= $as_of)
  WITH sm, score
  ORDER BY score DESC, sm.id
  LIMIT $k
  RETURN collect([sm.session_id, sm.id, score]) AS hits
}
RETURN raw, floor, hits
