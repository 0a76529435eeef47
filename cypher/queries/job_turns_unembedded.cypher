// A page of a namespace's turns stored without an embedding (the embedding backfill job).
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.embedding IS NULL
RETURN t.id AS id, t.text AS text
ORDER BY t.id
LIMIT $limit
