// For `kg reembed`: turns that carry a context key (their window's text).
// $namespace: one namespace's only (null: all); $missing: only those lacking that vector property
// (an import rebuilds what its file did not carry; null: all).
MATCH (t:Turn)
WHERE t.id > $after AND t.context_text IS NOT NULL
  AND ($namespace IS NULL OR t.namespace = $namespace) AND ($missing IS NULL OR t[$missing] IS NULL)
RETURN t.id AS id, t.context_text AS text
ORDER BY t.id
LIMIT $limit
