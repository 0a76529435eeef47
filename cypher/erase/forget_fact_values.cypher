// Forgetting, step 2: in each fact slot that lost events, the versions of a value no remaining
// event asserts go (their content came only from what was erased). Returns the slots that still
// hold events: they are replayed under a rewind event; an empty one is removed with the orphans.
UNWIND $slots AS key
MATCH (slot:FactSlot {namespace: $namespace, subject_key: key.subject_key, predicate: key.predicate})
CALL (slot) {
  MATCH (slot)-[:HAS_FACT]->(f:Fact)
  WHERE NOT EXISTS { (slot)-[:HAS_EVENT]->(e:FactEvent {op: 'assert'}) WHERE e.withdraws IS NULL
                                                                          AND e.object_value = f.object_value }
  DETACH DELETE f
  RETURN count(f) AS facts
}
WITH slot, facts, EXISTS { (slot)-[:HAS_EVENT]->(:FactEvent) } AS held
RETURN sum(facts) AS facts, [x IN collect(CASE WHEN held THEN slot END) | {subject_key: x.subject_key, predicate: x.predicate}] AS slots
