// Current summaries of a session in slots the new plan no longer has (the session got shorter
// windows after a configuration change, or was short and is long now).
MATCH (sm:Summary)-[:SUMMARIZES]->(s:Session {namespace: $namespace, id: $session_id})
WHERE sm.expired_at IS NULL AND NOT sm.slot IN $keep
SET sm.expired_at = $now
RETURN count(sm) AS expired
