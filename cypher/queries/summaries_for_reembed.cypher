// For `kg reembed`: summaries (current and expired), a page at a time (keyset on id).
MATCH (s:Summary)
WHERE s.id > $after
RETURN s.id AS id, s.text AS text
ORDER BY s.id
LIMIT $limit
