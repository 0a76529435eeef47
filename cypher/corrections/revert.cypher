// `revert` of an automatic invalidation: the correction holds again (its invalidation cleared,
// `reverted_at` says when), the link its winner made to it goes, and after a merge the sessions
// the survivor took over from it (`via`) go back. Returns the survivor to graduate again.
MATCH (c:Correction {id: $id})
WHERE c.namespace = $namespace AND c.invalidated_at IS NOT NULL
OPTIONAL MATCH (w:Correction {id: c.invalidated_by})
CALL (c, w) {
  OPTIONAL MATCH (w)-[l:LINK]->(c)
  WHERE l.type IN ['contradicts', 'supersedes']
  DELETE l
}
CALL (c, w) {
  OPTIONAL MATCH (c)-[l:LINK {type: 'duplicate'}]->(w)
  DELETE l
}
CALL (c, w) {
  OPTIONAL MATCH (w)-[r:FROM_SESSION {via: c.id}]->(:Session)
  DELETE r
}
WITH c, w, c.invalidated_reason = 'merged' AS merged
REMOVE c.invalidated_at, c.invalidated_reason, c.invalidated_by
SET c.reverted_at = datetime(), c.updated_at = datetime()
RETURN CASE WHEN merged AND w IS NOT NULL THEN [w.id] ELSE [] END AS survivors, c.reverted_at AS at
