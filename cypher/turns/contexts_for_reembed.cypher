// For `kg reembed`: turns that carry a context key, with their own vector and their neighbours' within
// $width (made again from those: ingest.summaries.keys.context_vectors, nothing embedded).
// $namespace: one namespace's only (null: all), each page a seek on (namespace, id) (0017): no other
// tenant's rows are read (`$namespace IS NULL OR ...` paged through every tenant's ids); $missing: only
// those lacking that vector property (an import rebuilds what its file did not carry; null: all).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (t:Turn {namespace: ns}) USING INDEX SEEK t:Turn(namespace, id)
  WHERE t.id > $after AND t.context_text IS NOT NULL AND ($missing IS NULL OR t[$missing] IS NULL)
  RETURN t ORDER BY t.namespace, t.id LIMIT $limit  // the index's order: the page alone is read
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (t:Turn)
  WHERE t.id > $after AND t.context_text IS NOT NULL AND ($missing IS NULL OR t[$missing] IS NULL)
  RETURN t ORDER BY t.id LIMIT $limit
}
// the neighbours: one seek per neighbour on (namespace, session_id, idx), every key given, forced (USING
// INDEX SEEK), in a subquery of the turn's own. Left to itself, 5.26 scanned that index, every tenant's
// turns, for each turn; told only which index, it chose by the statistics how much of the key to seek on.
CALL (t) {
  UNWIND [i IN range(t.idx - $width, t.idx + $width) WHERE i <> t.idx] AS i
  OPTIONAL MATCH (n:Turn {namespace: t.namespace, session_id: t.session_id, idx: i})
  USING INDEX SEEK n:Turn(namespace, session_id, idx)
  WHERE n.embedding IS NOT NULL
  WITH n ORDER BY i
  RETURN collect(n.embedding) AS around
}
RETURN t.id AS id, t.context_text AS text, t.embedding AS embedding, around
ORDER BY t.id
