// One vector per embedded entity name (id derived from entity and text: re-resolving the same
// name adds nothing). The entity_embedding index serves the embedding stage.
UNWIND $names AS row
MATCH (e:Entity {id: row.entity_id})
MERGE (n:EntityName {id: row.id})
  ON CREATE SET n.namespace = e.namespace, n.type = e.type, n.entity_id = e.id, n.text = row.text,
                n.embedding_model = $model, n.created_at = $now
MERGE (n)-[:NAME_OF]->(e)
WITH n, row
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(n) AS written
