// Relationships read from the session being erased lose its turns and its id; one left with no
// evidence and no session is deleted. Returns the ends of the deleted ones for the orphan check.
MATCH (a:Entity {namespace: $namespace})-[r:RELATES_TO]->(b:Entity)
WHERE $session_id IN r.sessions OR any(x IN r.evidence WHERE x IN $turn_ids)
SET r.evidence = [x IN r.evidence WHERE NOT x IN $turn_ids],
    r.sessions = [x IN r.sessions WHERE x <> $session_id]
WITH r, [a.id, b.id] AS ends, size(r.evidence) = 0 AND size(r.sessions) = 0 AS gone
CALL (r, gone) {
  WITH r WHERE gone
  DELETE r
}
RETURN sum(CASE WHEN gone THEN 1 ELSE 0 END) AS erased, sum(CASE WHEN gone THEN 0 ELSE 1 END) AS kept,
       collect(CASE WHEN gone THEN ends END) AS ends
