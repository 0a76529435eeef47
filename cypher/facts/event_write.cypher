// Record one fact event (assert or retract) on its slot, with the turns it was read from.
MATCH (s:FactSlot {namespace: $event.namespace, subject_key: $event.subject_key, predicate: $event.predicate})
CREATE (e:FactEvent)
SET e = $event
CREATE (s)-[:HAS_EVENT]->(e)
WITH e
CALL (e) {
  UNWIND $evidence_turn_ids AS turn_id
  MATCH (t:Turn {id: turn_id})
  WHERE t.namespace = e.namespace
  MERGE (e)-[:EVIDENCED_BY]->(t)
  RETURN count(t) AS linked
}
SET e.evidence_count = linked
RETURN linked
