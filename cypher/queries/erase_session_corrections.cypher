// Corrections stated in the session being erased. One also stated in another session keeps it and
// loses only its link to this session and to these turns; the others are deleted, with the
// nightly clusters they belonged to (their labels quote members; the next maintenance rebuilds them).
MATCH (:Session {namespace: $namespace, id: $session_id})<-[:FROM_SESSION]-(c:Correction)
CALL (c) {
  OPTIONAL MATCH (c)-[:FROM_SESSION]->(o:Session)
  WHERE o.id <> $session_id
  RETURN count(o) AS others
}
CALL (c, others) {
  WITH c WHERE others > 0
  MATCH (c)-[r:FROM_SESSION|EVIDENCED_BY]->(x)
  WHERE (x:Session AND x.id = $session_id) OR (x:Turn AND x.session_id = $session_id)
  DELETE r
}
WITH collect(CASE WHEN others = 0 THEN c END) AS doomed, sum(CASE WHEN others > 0 THEN 1 ELSE 0 END) AS kept
CALL (doomed) {
  UNWIND doomed AS c
  MATCH (k:CorrectionCluster)-[:HAS_MEMBER]->(c)
  WITH DISTINCT k
  DETACH DELETE k
  RETURN count(k) AS clusters
}
CALL (doomed) {
  UNWIND doomed AS c
  DETACH DELETE c
  RETURN count(c) AS erased
}
RETURN erased, kept, clusters
