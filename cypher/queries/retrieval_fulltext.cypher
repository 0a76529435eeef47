// BM25 over the turn fulltext index $index (turn_text | turn_context_text); $query is escaped
// Lucene built by queries.turns.lucene_escape, never raw user text.
CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS t, score
WHERE t.namespace = $namespace AND ($as_of IS NULL OR t.ts <= $as_of)
WITH t, score
LIMIT $k
RETURN t.id AS id, t.session_id AS session_id, t.idx AS idx, t.speaker AS speaker, t.ts AS ts, score,
       coalesce(t.follows_question, false) AS follows_question
