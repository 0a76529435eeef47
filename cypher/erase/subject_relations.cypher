// A subject erase, relationships first: the subject's own relationship slots with their events, and
// the events of other subjects' slots that name it as the object (those slots are replayed next:
// a target it had replaced holds again). The edges both ways go with erase/subject.
MATCH (e:Entity {namespace: $namespace, key: $key})
WITH collect(e) AS subjects, collect(e.id) AS ids
CALL (subjects) {
  UNWIND subjects AS e
  MATCH (slot:RelationSlot)-[:ABOUT]->(e)
  OPTIONAL MATCH (slot)-[:HAS_EVENT]->(ev:RelationEvent)
  WITH collect(DISTINCT slot) AS slots, collect(ev) AS events
  CALL (events) {
    UNWIND events AS ev
    DETACH DELETE ev
    RETURN count(ev) AS own_events
  }
  CALL (slots) {
    UNWIND slots AS slot
    DETACH DELETE slot
    RETURN count(slot) AS own_slots
  }
  RETURN own_events, own_slots
}
CALL (ids) {
  MATCH (slot:RelationSlot {namespace: $namespace})-[:HAS_EVENT]->(ev:RelationEvent)
  WHERE ev.object_id IN ids
  WITH collect(DISTINCT slot) AS slots, collect(ev) AS events
  CALL (events) {
    UNWIND events AS ev
    DETACH DELETE ev
    RETURN count(ev) AS object_events
  }
  RETURN object_events, [s IN slots | {subject_id: s.subject_id, relation: s.relation}] AS slots
}
RETURN own_events + object_events AS events, own_slots AS slots_erased, slots
