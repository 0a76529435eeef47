// Forgetting, step 1: the facts, fact events and decisions the erased turns evidenced, and (a whole
// session) the fact events its extraction wrote. One with evidence in other turns keeps it and loses
// only its links to the erased ones; the others are deleted. Returns, per label, how many went, the
// entities they were about, and the fact slots whose events went: those are replayed next (rewound).
CALL () {
  UNWIND $turn_ids AS turn_id
  MATCH (:Turn {id: turn_id})<-[:EVIDENCED_BY]-(n)
  WHERE n:Fact OR n:FactEvent OR n:Decision
  RETURN n
  UNION
  MATCH (n:FactEvent)
  WHERE $whole_session AND n.namespace = $namespace AND n.session_id = $session_id
  RETURN n
}
WITH DISTINCT n
CALL (n) {
  OPTIONAL MATCH (n)-[:EVIDENCED_BY]->(t:Turn)
  WHERE NOT t.id IN $turn_ids
  RETURN count(t) AS others
}
CALL (n) {
  OPTIONAL MATCH (n)-[:SUBJECT|OBJECT]->(e:Entity)
  RETURN collect(DISTINCT e.id) AS ends
}
CALL (n) {
  OPTIONAL MATCH (n)<-[:HAS_EVENT]-(slot:FactSlot)-[:ABOUT]->(e:Entity)
  RETURN collect(DISTINCT e.id) AS about, head(collect({subject_key: slot.subject_key, predicate: slot.predicate})) AS slot
}
WITH n, others, ends + about AS ends, CASE WHEN others = 0 AND n:FactEvent THEN slot END AS rewind,
     CASE WHEN n:Fact THEN 'Fact' WHEN n:FactEvent THEN 'FactEvent' ELSE 'Decision' END AS label
CALL (n, others) {
  WITH n, others WHERE others > 0
  MATCH (n)-[r:EVIDENCED_BY]->(t:Turn)
  WHERE t.id IN $turn_ids
  DELETE r
  WITH DISTINCT n, others WHERE n:FactEvent
  SET n.evidence_count = others
}
CALL (n, others) {
  WITH n WHERE others = 0
  DETACH DELETE n
}
RETURN label, sum(CASE WHEN others = 0 THEN 1 ELSE 0 END) AS erased, sum(CASE WHEN others > 0 THEN 1 ELSE 0 END) AS kept,
       collect(ends) AS ends, collect(DISTINCT rewind) AS slots
