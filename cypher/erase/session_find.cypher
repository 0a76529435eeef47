// A session erase starts here: the session's turn ids and the entities its turns mention (checked
// for orphans once everything else is gone). No row: no such session.
MATCH (s:Session {namespace: $namespace, id: $session_id})
OPTIONAL MATCH (s)-[:HAS_TURN]->(t:Turn)
WITH s, collect(t) AS turns
CALL (turns) {
  UNWIND turns AS t
  MATCH (t)-[:MENTIONS]->(e:Entity)
  RETURN collect(DISTINCT e.id) AS mentioned
}
RETURN [t IN turns | t.id] AS turn_ids, mentioned
