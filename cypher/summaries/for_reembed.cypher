// For `kg reembed`: summaries (current and expired), a page at a time (keyset on id), each with the own
// vectors of the turns it quotes when every one of them is still there with a vector (an extractive
// summary's vector is their unit mean; the turns are re-embedded before the summaries), else [].
// $namespace: one namespace's only (null: all), each page a seek on (namespace, id) (0017): no other
// tenant's rows are read (`$namespace IS NULL OR ...` paged through every tenant's ids); $missing: only
// those lacking that vector property (an import rebuilds what its file did not carry; null: all).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (s:Summary {namespace: ns}) USING INDEX SEEK s:Summary(namespace, id)
  WHERE s.id > $after AND ($missing IS NULL OR s[$missing] IS NULL)
  RETURN s ORDER BY s.namespace, s.id LIMIT $limit  // the index's order: the page alone is read
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (s:Summary)
  WHERE s.id > $after AND ($missing IS NULL OR s[$missing] IS NULL)
  RETURN s ORDER BY s.id LIMIT $limit
}
WITH s, coalesce(s.quoted_turns, []) AS ids
WITH s, ids, COLLECT { UNWIND ids AS quoted
                       MATCH (t:Turn {id: quoted}) WHERE t.embedding IS NOT NULL
                       RETURN t.embedding } AS vectors
RETURN s.id AS id, s.text AS text, CASE WHEN size(vectors) = size(ids) THEN vectors ELSE [] END AS quoted
ORDER BY id
