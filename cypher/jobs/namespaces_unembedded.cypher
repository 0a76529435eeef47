// Namespaces holding turns without an embedding (the embedding backfill sweep).
MATCH (t:Turn)
WHERE t.embedding IS NULL AND ($namespace IS NULL OR t.namespace = $namespace)
RETURN DISTINCT t.namespace AS namespace
