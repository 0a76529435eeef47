// Approximate (HNSW) search of the vector index $index, over-fetched ($fetch) then kept to the namespace.
CALL db.index.vector.queryNodes($index, $fetch, $vector) YIELD node AS t, score
WHERE t.namespace = $namespace AND ($as_of IS NULL OR t.ts <= $as_of)
WITH t, score
ORDER BY score DESC
LIMIT $k
RETURN t.id AS id, t.session_id AS session_id, t.idx AS idx, t.speaker AS speaker, t.ts AS ts, score,
       coalesce(t.follows_question, false) AS follows_question
