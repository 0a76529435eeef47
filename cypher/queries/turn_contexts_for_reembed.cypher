// For `kg reembed`: turns that carry a context key (their window's text).
MATCH (t:Turn)
WHERE t.id > $after AND t.context_text IS NOT NULL
RETURN t.id AS id, t.context_text AS text
ORDER BY t.id
LIMIT $limit
