// `kg reembed`: turns with a context key, a page at a time.
MATCH (t:Turn)
WHERE t.id > $after AND t.context_text IS NOT NULL
RETURN t.id AS id, t.context_text AS text
ORDER BY t.id
LIMIT $limit
