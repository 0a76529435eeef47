// (:Decision)-[:FROM_SESSION]->(Session) and its evidence turns; the id derives from the session
// and the decision's normalized text, so re-indexing adds nothing.
MATCH (s:Session {namespace: $namespace, id: $session_id})
UNWIND $rows AS row
MERGE (d:Decision {id: row.id})
  ON CREATE SET d.namespace = $namespace, d.text = row.text, d.created_at = $now
SET d += $stamp
MERGE (d)-[:FROM_SESSION]->(s)
WITH d, row
CALL (d, row) {
  UNWIND row.evidence AS turn_id
  MATCH (t:Turn {id: turn_id})
  WHERE t.namespace = $namespace
  MERGE (d)-[:EVIDENCED_BY]->(t)
}
RETURN count(d) AS written, sum(CASE WHEN d.created_at = $now THEN 1 ELSE 0 END) AS created
