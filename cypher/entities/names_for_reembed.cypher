// For `kg reembed`: embedded entity names, a page at a time (keyset on id).
// $namespace: one namespace's only (null: all); $missing: only those lacking that vector property
// (an import rebuilds what its file did not carry; null: all).
MATCH (n:EntityName)
WHERE n.id > $after
  AND ($namespace IS NULL OR n.namespace = $namespace) AND ($missing IS NULL OR n[$missing] IS NULL)
RETURN n.id AS id, n.text AS text
ORDER BY n.id
LIMIT $limit
