// Browsing: a namespace's corrections, optionally one status, optionally with invalidated ones.
MATCH (c:Correction)
WHERE c.namespace = $namespace
  AND ($status IS NULL OR c.status = $status)
  AND ($include_invalidated OR c.invalidated_at IS NULL)
  AND ($id IS NULL OR c.id = $id)
RETURN c {.*, embedding: null} AS correction,
       COLLECT { MATCH (c)-[:FROM_SESSION]->(s:Session) RETURN s.id ORDER BY s.id } AS session_ids
ORDER BY c.reinforcement_count DESC, c.last_seen_at DESC, c.id
LIMIT $limit
