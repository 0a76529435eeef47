// Corrections of a namespace per status, invalidated ones apart.
MATCH (c:Correction)
WHERE c.namespace = $namespace
RETURN CASE WHEN c.invalidated_at IS NULL THEN c.status ELSE 'invalidated' END AS status, count(c) AS count
