// Take the write lock of one subject+relationship type (no row: run relationships/slot_ensure first),
// then read what the planner needs: the subject's edges of this type believed now, and every event
// of the slot. Only this subject and type: supersession never looks at other entities' edges.
MATCH (s:RelationSlot {namespace: $namespace, subject_id: $subject_id, relation: $relation})-[lock:ABOUT]->(a:Entity)
SET lock.writes = lock.writes + 1
WITH s, a
CALL (a) {
  OPTIONAL MATCH (a)-[r:RELATES_TO {relation: $relation}]->(b:Entity)
  WHERE r.expired_at IS NULL AND r.lineage_id IS NOT NULL
  RETURN collect(r {.*, subject_id: a.id, object_id: b.id}) AS edges
}
CALL (s) {
  OPTIONAL MATCH (s)-[:HAS_EVENT]->(e:RelationEvent)
  RETURN collect(e {.*}) AS events
}
RETURN edges, events
