// Turns in a namespace, from its sessions' counters (cheaper than counting turns).
MATCH (s:Session)
WHERE s.namespace = $namespace AND s.started_at IS NOT NULL
RETURN coalesce(sum(s.message_count), 0) AS turns
