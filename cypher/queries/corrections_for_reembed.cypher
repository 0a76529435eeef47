// `kg reembed`: corrections in id order, a page at a time; the embedded text is `rule_key`.
MATCH (c:Correction)
WHERE c.id > $after
RETURN c.id AS id, c.rule_key AS text
ORDER BY c.id
LIMIT $limit
