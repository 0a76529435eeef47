MATCH (t:Turn)
WHERE t.id > $after
RETURN t.id AS id, t.text AS text
ORDER BY t.id
LIMIT $limit
