// A page of a namespace's turns stored without an embedding (the embedding backfill job), with what
// their key is made of (ingest.turn_keys).
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.embedding IS NULL
RETURN t.id AS id, t.speaker AS speaker, t.text AS text,
       t.attachment_kinds AS attachment_kinds, t.attachment_captions AS attachment_captions,
       t.attachment_urls AS attachment_urls
ORDER BY t.id
LIMIT $limit
