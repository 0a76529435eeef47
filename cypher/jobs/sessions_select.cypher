// Sessions chosen for `kg reindex --since / --session`: active since $since, of $namespace, or one
// session; every filter is optional.
MATCH (s:Session)
WHERE ($namespace IS NULL OR s.namespace = $namespace)
  AND ($session_id IS NULL OR s.id = $session_id)
  AND ($since IS NULL OR s.ended_at >= $since)
RETURN s.namespace AS namespace, s.id AS id
ORDER BY s.namespace, s.ended_at
