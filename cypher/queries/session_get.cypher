MATCH (s:Session {namespace: $namespace, id: $session_id})
RETURN s {.id, .namespace, .started_at, .ended_at, .message_count, .status} AS session
