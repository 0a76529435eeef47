// A merge: the survivor takes over the absorbed correction's sessions and evidence; a session it
// did not state itself records `via` the absorbed one, so `revert` of the merge gives it back.
UNWIND $rows AS row
MATCH (s:Correction {id: row.survivor}), (a:Correction {id: row.absorbed})
CALL (s, a) {
  MATCH (a)-[r:FROM_SESSION]->(x:Session)
  MERGE (s)-[n:FROM_SESSION]->(x)
    ON CREATE SET n.seen_at = r.seen_at, n.via = a.id
}
CALL (s, a) {
  MATCH (a)-[:EVIDENCED_BY]->(t:Turn)
  MERGE (s)-[:EVIDENCED_BY]->(t)
}
