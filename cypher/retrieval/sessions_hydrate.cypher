// Sessions with their current session summary.
UNWIND $ids AS id
MATCH (s:Session {namespace: $namespace, id: id})
OPTIONAL MATCH (sm:Summary {kind: 'session'})-[:SUMMARIZES]->(s)
  WHERE sm.expired_at IS NULL
RETURN s {.id, .namespace, .started_at, .ended_at, .message_count, .status} AS session,
       sm {.*, embedding: null} AS summary
