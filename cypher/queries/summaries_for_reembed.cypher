// `kg reembed`: every summary (expired versions too), a page at a time.
MATCH (sm:Summary)
WHERE sm.id > $after
RETURN sm.id AS id, sm.text AS text
ORDER BY sm.id
LIMIT $limit
