// Facts, fact events and decisions evidenced by the turns of the session being erased. Those with
// evidence in another session keep it and only lose their links to these turns; the others are
// deleted. Returns, per label, how many went and which entities they were about.
UNWIND $turn_ids AS turn_id
MATCH (:Turn {id: turn_id})<-[:EVIDENCED_BY]-(n)
WHERE n:Fact OR n:FactEvent OR n:Decision
WITH DISTINCT n
CALL (n) {
  OPTIONAL MATCH (n)-[:EVIDENCED_BY]->(t:Turn)
  WHERE t.session_id <> $session_id
  RETURN count(t) AS others
}
CALL (n) {
  OPTIONAL MATCH (n)-[:SUBJECT|OBJECT]->(e:Entity)
  RETURN collect(DISTINCT e.id) AS ends
}
CALL (n) {
  OPTIONAL MATCH (n)<-[:HAS_EVENT]-(:FactSlot)-[:ABOUT]->(e:Entity)
  RETURN collect(DISTINCT e.id) AS about
}
WITH n, others, ends + about AS ends,
     CASE WHEN n:Fact THEN 'Fact' WHEN n:FactEvent THEN 'FactEvent' ELSE 'Decision' END AS label
CALL (n, others) {
  WITH n, others WHERE others > 0
  MATCH (n)-[r:EVIDENCED_BY]->(t:Turn)
  WHERE t.session_id = $session_id
  DELETE r
  WITH DISTINCT n, others WHERE n:FactEvent
  SET n.evidence_count = others
}
CALL (n, others) {
  WITH n WHERE others = 0
  DETACH DELETE n
}
RETURN label, sum(CASE WHEN others = 0 THEN 1 ELSE 0 END) AS erased, sum(CASE WHEN others > 0 THEN 1 ELSE 0 END) AS kept,
       collect(ends) AS ends
