// For `kg reembed`: embedded entity names, a page at a time (keyset on id).
MATCH (n:EntityName)
WHERE n.id > $after
RETURN n.id AS id, n.text AS text
ORDER BY n.id
LIMIT $limit
