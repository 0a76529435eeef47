// Namespaces holding turns without an embedding (the embedding backfill sweep).
MATCH (t:Turn)
WHERE t.embedding IS NULL
RETURN DISTINCT t.namespace AS namespace
