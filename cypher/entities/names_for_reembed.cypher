// For `kg reembed`: embedded entity names, a page at a time (keyset on id).
// $namespace: one namespace's only (null: all), each page a seek on (namespace, id) (0017): no other
// tenant's rows are read (`$namespace IS NULL OR ...` paged through every tenant's ids); $missing: only
// those lacking that vector property (an import rebuilds what its file did not carry; null: all).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (n:EntityName {namespace: ns}) USING INDEX SEEK n:EntityName(namespace, id)
  WHERE n.id > $after AND ($missing IS NULL OR n[$missing] IS NULL)
  RETURN n ORDER BY n.namespace, n.id LIMIT $limit  // the index's order: the page alone is read
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (n:EntityName)
  WHERE n.id > $after AND ($missing IS NULL OR n[$missing] IS NULL)
  RETURN n ORDER BY n.id LIMIT $limit
}
RETURN n.id AS id, n.text AS text
ORDER BY n.id
