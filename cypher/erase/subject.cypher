// Everything held about one subject (entities of that key): the facts and events of its slots and
// the slots, the facts that have it as their object with the events asserting that value, and its
// relationships (their events went with erase/subject_relations). Returns the counts, the other
// entities touched (for the orphan check) and the other subjects' fact slots that lost the events
// asserting it as their value: they are replayed next (a value it had superseded holds again).
MATCH (e:Entity {namespace: $namespace, key: $key})
WITH collect(e) AS subjects
CALL (subjects) {
  UNWIND subjects AS e
  MATCH (slot:FactSlot)-[:ABOUT]->(e)
  RETURN collect(DISTINCT slot) AS slots
}
CALL (subjects) {
  UNWIND subjects AS e
  MATCH (f:Fact)-[:OBJECT]->(e)
  MATCH (slot:FactSlot)-[:HAS_FACT]->(f)
  RETURN collect(DISTINCT f) AS object_facts, collect(DISTINCT [slot, f.object_value]) AS asserted
}
CALL (asserted) {
  UNWIND asserted AS pair
  WITH pair[0] AS slot, pair[1] AS value
  MATCH (slot)-[:HAS_EVENT]->(ev:FactEvent {object_value: value})
  RETURN collect(DISTINCT ev) AS object_events,
         collect(DISTINCT {subject_key: slot.subject_key, predicate: slot.predicate}) AS holder_slots
}
CALL (asserted) {
  UNWIND asserted AS pair
  WITH pair[0] AS slot
  MATCH (slot)-[:ABOUT]->(holder:Entity)
  RETURN collect(DISTINCT holder.id) AS holders
}
CALL (subjects) {
  UNWIND subjects AS e
  MATCH (e)-[r:RELATES_TO]-(other:Entity)
  RETURN collect(DISTINCT r) AS relationships, collect(DISTINCT other.id) AS others
}
CALL (slots) {
  UNWIND slots AS slot
  MATCH (slot)-[:HAS_FACT]->(f:Fact)
  OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
  RETURN collect(f) AS own_facts, collect(DISTINCT o.id) AS objects
}
CALL (slots) {
  UNWIND slots AS slot
  MATCH (slot)-[:HAS_EVENT]->(ev:FactEvent)
  RETURN collect(ev) AS own_events
}
CALL (own_facts, object_facts) {
  UNWIND own_facts + object_facts AS f
  WITH DISTINCT f
  DETACH DELETE f
  RETURN count(f) AS facts
}
CALL (own_events, object_events) {
  UNWIND own_events + object_events AS ev
  WITH DISTINCT ev
  DETACH DELETE ev
  RETURN count(ev) AS events
}
CALL (relationships) {
  UNWIND relationships AS r
  DELETE r
  RETURN count(r) AS relationships_erased
}
CALL (slots) {
  UNWIND slots AS slot
  DETACH DELETE slot
  RETURN count(slot) AS slots_erased
}
RETURN size(subjects) AS subjects, [e IN subjects | e.id] AS subject_ids, facts, events,
       relationships_erased AS relationships, slots_erased AS slots, others + holders + objects AS touched,
       [x IN holder_slots WHERE NOT x.subject_key = $key] AS holder_slots
