// Namespaces holding turns without an embedding, or with $late without token vectors (the embedding
// backfill sweep). $namespace given: its turns only, sought by index (not every tenant's).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (t:Turn {namespace: ns}) USING INDEX SEEK t:Turn(namespace)
  WHERE t.embedding IS NULL OR ($late AND t.late_tokens IS NULL)
  RETURN t.namespace AS namespace LIMIT 1
  UNION
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (t:Turn)
  WHERE t.embedding IS NULL OR ($late AND t.late_tokens IS NULL)
  RETURN DISTINCT t.namespace AS namespace
}
RETURN namespace
