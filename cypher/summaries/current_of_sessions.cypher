// The current (not expired) summaries of the sessions in $sessions (a list of {namespace, id}).
UNWIND $sessions AS key
MATCH (sm:Summary)-[:SUMMARIZES]->(s:Session {namespace: key.namespace, id: key.id})
WHERE sm.expired_at IS NULL
RETURN s.namespace AS namespace, s.id AS session_id, sm {.*, embedding: null} AS summary
