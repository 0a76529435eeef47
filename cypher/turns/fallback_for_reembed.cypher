// For the reembed of fallback vectors: the turns the fallback model $model embedded, with what their key is
// made of (ingest.turn_keys), in id order after $after.
MATCH (t:Turn)
WHERE t.embedding_model = $model AND t.id > $after
RETURN t.id AS id, t.speaker AS speaker, t.text AS text,
       t.attachment_kinds AS attachment_kinds, t.attachment_captions AS attachment_captions,
       t.attachment_urls AS attachment_urls
ORDER BY t.id
LIMIT $limit
