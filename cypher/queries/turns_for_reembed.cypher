// For `kg reembed`: every turn with what its key is made of (ingest.turn_keys).
MATCH (t:Turn)
WHERE t.id > $after
RETURN t.id AS id, t.speaker AS speaker, t.text AS text,
       t.attachment_kinds AS attachment_kinds, t.attachment_captions AS attachment_captions,
       t.attachment_urls AS attachment_urls
ORDER BY t.id
LIMIT $limit
