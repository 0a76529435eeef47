// For `kg reembed`: every turn with what its key is made of (ingest.turn_keys).
// $namespace: one namespace's only (null: all), each page a seek on (namespace, id) (0017): no other
// tenant's rows are read (`$namespace IS NULL OR ...` paged through every tenant's ids); $missing: only
// those lacking that vector property (an import rebuilds what its file did not carry; null: all).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (t:Turn {namespace: ns}) USING INDEX SEEK t:Turn(namespace, id)
  WHERE t.id > $after AND ($missing IS NULL OR t[$missing] IS NULL)
  RETURN t ORDER BY t.namespace, t.id LIMIT $limit  // the index's order: the page alone is read
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (t:Turn)
  WHERE t.id > $after AND ($missing IS NULL OR t[$missing] IS NULL)
  RETURN t ORDER BY t.id LIMIT $limit
}
RETURN t.id AS id, t.speaker AS speaker, t.text AS text,
       t.attachment_kinds AS attachment_kinds, t.attachment_captions AS attachment_captions,
       t.attachment_urls AS attachment_urls
ORDER BY t.id
