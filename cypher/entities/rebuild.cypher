// An entity rebuilt from the mentions that remain after an erase: its resolver properties replaced
// (null ones removed: an entity no mention is left of is the bare node a fact names), the name keys,
// identifiers and name vectors it no longer has unlinked, and those no entity holds any more deleted.
UNWIND $entities AS row
MATCH (e:Entity {id: row.id})
SET e += row.props, e.version = coalesce(e.version, 0) + 1, e.updated_at = datetime()
WITH e, row
CALL (e, row) {
  MATCH (e)-[r:HAS_KEY]->(k:NameKey)
  WHERE NOT k.key IN row.keys
  DELETE r
  WITH DISTINCT k
  WHERE NOT EXISTS { (k)<-[:HAS_KEY]-() }
  DETACH DELETE k
  RETURN count(k) AS name_keys
}
CALL (e, row) {
  MATCH (e)-[r:IDENTIFIED_BY]->(i:Identifier)
  WHERE NOT (i.kind + ':' + i.value) IN row.identifiers
  DELETE r
  WITH DISTINCT i
  WHERE NOT EXISTS { (i)<-[:IDENTIFIED_BY]-() }
  DETACH DELETE i
  RETURN count(i) AS identifiers
}
CALL (e, row) {
  MATCH (n:EntityName)-[:NAME_OF]->(e)
  WHERE NOT n.text IN row.names
  DETACH DELETE n
  RETURN count(n) AS names
}
RETURN sum(name_keys) AS name_keys, sum(identifiers) AS identifiers, sum(names) AS names
