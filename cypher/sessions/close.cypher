MATCH (s:Session {namespace: $namespace, id: $session_id})
SET s.status = 'closed', s.closed_at = coalesce(s.closed_at, $now)
RETURN s.id AS id
