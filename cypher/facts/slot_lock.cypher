// Take the write lock of one subject+predicate (no row: run facts/slot_ensure first), then read
// what the planner needs: the fact versions believed now and every event recorded so far.
// Writers of the slot queue on the SET until the holder commits, so none plans from records
// another is about to change. The lock is the slot's ABOUT relationship, not the slot node: a
// transaction holding a node's write lock that then adds relationships to that node (HAS_EVENT,
// HAS_FACT) deadlocks with the writers queued on it in Neo4j 5.
MATCH (s:FactSlot {namespace: $namespace, subject_key: $subject_key, predicate: $predicate})-[lock:ABOUT]->(:Entity)
SET lock.writes = lock.writes + 1
WITH s
CALL (s) {
  OPTIONAL MATCH (s)-[:HAS_FACT]->(f:Fact)
  WHERE f.expired_at IS NULL
  RETURN collect(f {.*}) AS facts
}
CALL (s) {
  OPTIONAL MATCH (s)-[:HAS_EVENT]->(e:FactEvent)
  RETURN collect(e {.*}) AS events
}
RETURN facts, events
