// Current summaries of sessions in slots the new plan no longer has (the session got shorter
// windows after a configuration change, or was short and is long now). $sessions is a list of
// {namespace, id, keep}: the slots each session keeps.
UNWIND $sessions AS key
MATCH (sm:Summary)-[:SUMMARIZES]->(s:Session {namespace: key.namespace, id: key.id})
WHERE sm.expired_at IS NULL AND NOT sm.slot IN key.keep
SET sm.expired_at = $now
RETURN count(sm) AS expired
