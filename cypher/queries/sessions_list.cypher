MATCH (s:Session)
WHERE s.namespace = $namespace
RETURN s {.id, .namespace, .started_at, .ended_at, .message_count, .status} AS session
ORDER BY s.started_at DESC
LIMIT $limit
