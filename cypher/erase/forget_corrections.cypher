// Forgetting, step 4: the corrections the erased turns stated. A whole session loses every
// correction stated in it; one turn, those its evidence there was only that turn. Each loses its
// links to the erased turns and, when the statement goes, to that session; one stated in no other
// session is deleted (with the nightly clusters it belonged to: their labels quote members). A
// correction the erased statement had invalidated (contradicted or superseded) holds again: the
// invalidation by a deleted one, or one made when the erased session said it. Returns the ids to
// re-evaluate (kept ones lost a session; restored ones hold again) and what was deleted.
CALL () {
  MATCH (c:Correction)-[:FROM_SESSION]->(:Session {namespace: $namespace, id: $session_id})
  WHERE $whole_session
  RETURN c
  UNION
  UNWIND $turn_ids AS turn_id
  MATCH (:Turn {id: turn_id})<-[:EVIDENCED_BY]-(c:Correction)
  RETURN c
}
WITH DISTINCT c
OPTIONAL MATCH (c)-[stated:FROM_SESSION]->(:Session {namespace: $namespace, id: $session_id})
WITH c, stated, $whole_session OR NOT EXISTS {
  MATCH (c)-[:EVIDENCED_BY]->(t:Turn {session_id: $session_id}) WHERE NOT t.id IN $turn_ids } AS loses
WITH c, loses, CASE WHEN loses THEN stated.seen_at END AS said_at
CALL (c, said_at) {
  OPTIONAL MATCH (old:Correction {invalidated_by: c.id})
  WHERE said_at IS NOT NULL AND old.invalidated_reason IN ['contradicted', 'superseded'] AND old.invalidated_at = said_at
  RETURN collect(old) AS undone
}
CALL (c) {
  MATCH (c)-[r:EVIDENCED_BY]->(t:Turn)
  WHERE t.id IN $turn_ids
  DELETE r
}
CALL (c, loses) {
  WITH c WHERE loses
  MATCH (c)-[r:FROM_SESSION]->(:Session {namespace: $namespace, id: $session_id})
  DELETE r
}
WITH c, undone, NOT EXISTS { (c)-[:FROM_SESSION]->() } AS gone, loses
WITH collect(CASE WHEN gone THEN c END) AS doomed, collect(CASE WHEN loses AND NOT gone THEN c.id END) AS kept,
     reduce(acc = [], u IN collect(undone) | acc + u) AS undone
CALL (doomed, undone) {
  MATCH (old:Correction)
  WHERE (old IN undone OR (old.invalidated_by IN [d IN doomed | d.id]
                           AND old.invalidated_reason IN ['contradicted', 'superseded']))
    AND NOT old IN doomed
  WITH DISTINCT old
  OPTIONAL MATCH (:Correction {id: old.invalidated_by})-[l:LINK]->(old)
  WHERE l.type IN ['contradicts', 'supersedes']
  DELETE l
  WITH DISTINCT old
  REMOVE old.invalidated_at, old.invalidated_reason, old.invalidated_by
  SET old.updated_at = datetime()
  RETURN collect(DISTINCT old.id) AS restored
}
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
RETURN erased, clusters, kept, restored
