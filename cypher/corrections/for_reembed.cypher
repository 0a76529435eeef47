// `kg reembed`: corrections in id order, a page at a time; the embedded text is `rule_key`.
// $namespace: one namespace's only (null: all), each page a seek on (namespace, id) (0017): no other
// tenant's rows are read (`$namespace IS NULL OR ...` paged through every tenant's ids); $missing: only
// those lacking that vector property (an import rebuilds what its file did not carry; null: all).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (c:Correction {namespace: ns}) USING INDEX SEEK c:Correction(namespace, id)
  WHERE c.id > $after AND ($missing IS NULL OR c[$missing] IS NULL)
  RETURN c ORDER BY c.namespace, c.id LIMIT $limit  // the index's order: the page alone is read
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (c:Correction)
  WHERE c.id > $after AND ($missing IS NULL OR c[$missing] IS NULL)
  RETURN c ORDER BY c.id LIMIT $limit
}
RETURN c.id AS id, c.rule_key AS text
ORDER BY c.id
