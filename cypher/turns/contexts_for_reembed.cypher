// For `kg reembed`: turns that carry a context key, with their own vector and their neighbours' within
// $width (made again from those: ingest.summaries.keys.context_vectors, nothing embedded).
// $namespace: one namespace's only (null: all); $missing: only those lacking that vector property
// (an import rebuilds what its file did not carry; null: all).
MATCH (t:Turn)
WHERE t.id > $after AND t.context_text IS NOT NULL
  AND ($namespace IS NULL OR t.namespace = $namespace) AND ($missing IS NULL OR t[$missing] IS NULL)
WITH t ORDER BY t.id LIMIT $limit
OPTIONAL MATCH (n:Turn)
WHERE n.namespace = t.namespace AND n.session_id = t.session_id AND n.idx <> t.idx
  AND n.idx >= t.idx - $width AND n.idx <= t.idx + $width AND n.embedding IS NOT NULL
WITH t, n ORDER BY n.idx
RETURN t.id AS id, t.context_text AS text, t.embedding AS embedding, collect(n.embedding) AS around
ORDER BY t.id
