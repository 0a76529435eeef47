// Bulk load of already-resolved entities (bench.dedup --preload): nodes, keys, identifiers and
// name vectors in one statement, no resolution.
UNWIND $rows AS row
CREATE (e:Entity {id: row.id})
SET e += row.props, e.key = row.key, e.version = 1, e.created_at = datetime()
WITH e, row
CALL (e, row) {
  UNWIND row.props.keys AS key
  MERGE (k:NameKey {namespace: e.namespace, type: e.type, key: key})
  CREATE (e)-[:HAS_KEY]->(k)
}
CALL (e, row) {
  UNWIND row.identifiers AS x
  MERGE (i:Identifier {namespace: e.namespace, kind: x.kind, value: x.value})
  CREATE (e)-[:IDENTIFIED_BY]->(i)
}
CALL (e, row) {
  WITH row WHERE row.name IS NOT NULL
  CREATE (n:EntityName {id: row.name.id, namespace: e.namespace, type: e.type, entity_id: e.id,
                        text: row.name.text, embedding_model: $model})
  CREATE (n)-[:NAME_OF]->(e)
  WITH n, row
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.name.embedding)
}
RETURN count(e) AS written
