// The summaries of one session (current ones only unless $include_expired), newest first.
MATCH (sm:Summary)-[:SUMMARIZES]->(s:Session {namespace: $namespace, id: $session_id})
WHERE $include_expired OR sm.expired_at IS NULL
RETURN sm {.*, embedding: null} AS summary
ORDER BY sm.kind, sm.slot, sm.version DESC
