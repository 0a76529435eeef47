// Record one relationship event (assert or retract) on its slot, with the turns it was read from.
MATCH (s:RelationSlot {namespace: $event.namespace, subject_id: $event.subject_id, relation: $event.relation})
CREATE (e:RelationEvent)
SET e = $event
CREATE (s)-[:HAS_EVENT]->(e)
WITH e
CALL (e) {
  UNWIND e.evidence AS turn_id
  MATCH (t:Turn {id: turn_id})
  WHERE t.namespace = e.namespace
  MERGE (e)-[:EVIDENCED_BY]->(t)
  RETURN count(t) AS linked
}
RETURN linked
