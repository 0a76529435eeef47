// For `kg reembed`: summaries (current and expired), a page at a time (keyset on id).
// $namespace: one namespace's only (null: all); $missing: only those lacking that vector property
// (an import rebuilds what its file did not carry; null: all).
MATCH (s:Summary)
WHERE s.id > $after
  AND ($namespace IS NULL OR s.namespace = $namespace) AND ($missing IS NULL OR s[$missing] IS NULL)
RETURN s.id AS id, s.text AS text
ORDER BY s.id
LIMIT $limit
