// Forgetting, step 3: relationship events the erased turns evidenced, or (a whole session) that its
// extraction wrote. One with evidence in other turns keeps those and loses the erased ids; the
// others are deleted, and their slots are replayed next (rewound). Then the edge versions: the
// erased turns (and a whole session's id) leave `evidence` and `sessions`; one left with neither
// goes, and in a slot that lost events, so does an edge whose object no remaining event asserts.
CALL () {
  UNWIND $turn_ids AS turn_id
  MATCH (:Turn {id: turn_id})<-[:EVIDENCED_BY]-(ev:RelationEvent)
  RETURN ev
  UNION
  MATCH (ev:RelationEvent {namespace: $namespace, session_id: $session_id})
  WHERE $whole_session
  RETURN ev
}
WITH DISTINCT ev, [x IN coalesce(ev.evidence, []) WHERE NOT x IN $turn_ids] AS rest
MATCH (slot:RelationSlot)-[:HAS_EVENT]->(ev)
WITH ev, rest, slot, size(rest) > 0 AS kept
CALL (ev, rest, kept) {
  WITH ev, rest WHERE kept
  SET ev.evidence = rest
  WITH ev
  MATCH (ev)-[r:EVIDENCED_BY]->(t:Turn)
  WHERE t.id IN $turn_ids
  DELETE r
}
WITH collect(DISTINCT CASE WHEN NOT kept THEN slot END) AS slots, collect(CASE WHEN NOT kept THEN ev END) AS doomed
CALL (doomed) {
  UNWIND doomed AS ev
  DETACH DELETE ev
  RETURN count(ev) AS events
}
CALL () {
  MATCH (a:Entity {namespace: $namespace})-[r:RELATES_TO]->(b:Entity)
  WHERE ($whole_session AND $session_id IN r.sessions) OR any(x IN r.evidence WHERE x IN $turn_ids)
  WITH a, b, r, [x IN r.evidence WHERE NOT x IN $turn_ids] AS rest
  WITH a, b, r, rest, $whole_session OR NOT EXISTS { MATCH (t:Turn) WHERE t.id IN rest AND t.session_id = $session_id } AS leaves
  SET r.evidence = rest, r.sessions = [x IN r.sessions WHERE NOT (leaves AND x = $session_id)]
  WITH a, b, r, size(r.evidence) = 0 AND size(r.sessions) = 0 AS gone
  CALL (r, gone) {
    WITH r WHERE gone
    DELETE r
  }
  RETURN sum(CASE WHEN gone THEN 1 ELSE 0 END) AS stripped, collect(CASE WHEN gone THEN [a.id, b.id] END) AS stripped_ends
}
CALL (slots) {
  UNWIND slots AS slot
  MATCH (slot)-[:ABOUT]->(a:Entity)-[r:RELATES_TO {relation: slot.relation}]->(b:Entity)
  WHERE r.lineage_id IS NOT NULL AND NOT EXISTS {
    (slot)-[:HAS_EVENT]->(e:RelationEvent {op: 'assert', object_id: b.id}) WHERE e.withdraws IS NULL }
  WITH r, [a.id, b.id] AS ends
  DELETE r
  RETURN count(r) AS unasserted, collect(ends) AS unasserted_ends
}
RETURN events, stripped + unasserted AS erased, stripped_ends + unasserted_ends AS ends,
       [s IN slots WHERE EXISTS { (s)-[:HAS_EVENT]->(:RelationEvent) } | {subject_id: s.subject_id, relation: s.relation}] AS slots
