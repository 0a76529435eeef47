// Facts for recall: those about an entity the query names ($keys: candidate entity keys) and those
// evidenced by the retrieved turns, believed now and holding at $as_of (superseded, retracted and
// expired versions excluded). `named`: reached through a named entity.
CALL () {
  MATCH (e:Entity)
  WHERE e.namespace = $namespace AND e.key IN $keys
  MATCH (f:Fact)-[:SUBJECT|OBJECT]->(e)
  RETURN f, true AS named
  UNION
  MATCH (t:Turn)<-[:EVIDENCED_BY]-(f:Fact)
  WHERE t.id IN $turn_ids
  RETURN f, false AS named
}
WITH f, true IN collect(named) AS named
WHERE f.namespace = $namespace AND f.expired_at IS NULL AND f.valid_from <= $as_of
  AND (f.valid_to IS NULL OR f.valid_to > $as_of)
MATCH (f)-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
OPTIONAL MATCH (f)-[:EVIDENCED_BY]->(t:Turn)
WITH f, named, s, o, collect(t.id) AS evidence
RETURN f {.*} AS fact, s.name AS subject, o.id AS object_entity_id, named, evidence
LIMIT $limit
