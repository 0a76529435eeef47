// A turn erase starts here: the turn's session, how many turns it has, whether it was summarized
// (its summaries quote the turn: they are made again), and the entities the turn mentions. No row:
// no such turn in the namespace.
MATCH (t:Turn {id: $turn_id})
WHERE t.namespace = $namespace
MATCH (s:Session {namespace: $namespace, id: t.session_id})
RETURN s.id AS session_id, s.status AS status, COUNT { (s)-[:HAS_TURN]->() } AS turns,
       s.summary_version IS NOT NULL OR EXISTS { (:Summary)-[:SUMMARIZES]->(s) } AS summarized,
       COLLECT { MATCH (t)-[:MENTIONS]->(e:Entity) RETURN DISTINCT e.id } AS mentioned
