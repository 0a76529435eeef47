// `kg reembed`: corrections in id order, a page at a time; the embedded text is `rule_key`.
// $namespace: one namespace's only (null: all); $missing: only those lacking that vector property
// (an import rebuilds what its file did not carry; null: all).
MATCH (c:Correction)
WHERE c.id > $after
  AND ($namespace IS NULL OR c.namespace = $namespace) AND ($missing IS NULL OR c[$missing] IS NULL)
RETURN c.id AS id, c.rule_key AS text
ORDER BY c.id
LIMIT $limit
