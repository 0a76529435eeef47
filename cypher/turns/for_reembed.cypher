// For `kg reembed`: every turn with what its key is made of (ingest.turn_keys).
// $namespace: one namespace's only (null: all); $missing: only those lacking that vector property
// (an import rebuilds what its file did not carry; null: all).
MATCH (t:Turn)
WHERE t.id > $after
  AND ($namespace IS NULL OR t.namespace = $namespace) AND ($missing IS NULL OR t[$missing] IS NULL)
RETURN t.id AS id, t.speaker AS speaker, t.text AS text,
       t.attachment_kinds AS attachment_kinds, t.attachment_captions AS attachment_captions,
       t.attachment_urls AS attachment_urls
ORDER BY t.id
LIMIT $limit
