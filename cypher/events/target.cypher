// `revert` and `confirm`: the fact or relationship event of that id with every event of its slot
// (its effect is the replay's), or the correction of that id. No row: no such id in the namespace.
CALL () {
  MATCH (ev:FactEvent {id: $id})
  WHERE ev.namespace = $namespace
  MATCH (slot:FactSlot)-[:HAS_EVENT]->(ev)
  RETURN 'fact' AS kind, ev {.*} AS target, {subject_key: slot.subject_key, predicate: slot.predicate} AS slot,
         COLLECT { MATCH (slot)-[:HAS_EVENT]->(x) RETURN x {.*} } AS events
  UNION
  MATCH (ev:RelationEvent {id: $id})
  WHERE ev.namespace = $namespace
  MATCH (slot:RelationSlot)-[:HAS_EVENT]->(ev)
  RETURN 'relationship' AS kind, ev {.*} AS target, {subject_id: slot.subject_id, relation: slot.relation} AS slot,
         COLLECT { MATCH (slot)-[:HAS_EVENT]->(x) RETURN x {.*} } AS events
  UNION
  MATCH (c:Correction {id: $id})
  WHERE c.namespace = $namespace
  RETURN 'correction' AS kind, c {.*, embedding: null} AS target, null AS slot, [] AS events
}
RETURN kind, target, slot, events
