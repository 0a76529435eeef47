// `explain`: one fact version (by its id) or relationship edge version (by its id), with every event
// of its subject+predicate (or subject+type) in the order they were learned, each with the turns it
// quotes. Read-only; no row: no such id in the namespace.
CALL () {
  MATCH (f:Fact {id: $id})
  WHERE f.namespace = $namespace
  MATCH (slot:FactSlot)-[:HAS_FACT]->(f)
  MATCH (slot)-[:ABOUT]->(e:Entity)
  RETURN 'fact' AS kind, f {.*, read_at: null} AS statement, e.name AS subject, slot.predicate AS predicate,
         f.object_value AS object, f.object_value AS value, slot,
         COLLECT { MATCH (f)<-[:SUPERSEDES]-(n:Fact) WHERE n.expired_at IS NULL RETURN n.id } AS superseded_by
  UNION
  MATCH (a:Entity)-[r:RELATES_TO {id: $id}]->(b:Entity)
  WHERE r.namespace = $namespace
  MATCH (slot:RelationSlot {namespace: $namespace, subject_id: a.id, relation: r.relation})
  RETURN 'relationship' AS kind, r {.*} AS statement, a.name AS subject, r.relation AS predicate, b.name AS object,
         b.id AS value, slot, [] AS superseded_by
}
CALL (slot) {
  MATCH (slot)-[:HAS_EVENT]->(ev)
  OPTIONAL MATCH (ev)-[:EVIDENCED_BY]->(t:Turn)
  WITH ev, t ORDER BY t.ts, t.id
  WITH ev, collect(t {.id, .session_id, .role, .speaker, .ts, .text, .trust}) AS quoted
  ORDER BY ev.recorded_at, ev.id
  RETURN collect(ev {.*, quoted: quoted}) AS events
}
RETURN kind, statement, subject, predicate, object, value, head(superseded_by) AS superseded_by, events
