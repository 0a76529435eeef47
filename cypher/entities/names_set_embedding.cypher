// For `kg reembed`: new vectors for entity names.
UNWIND $rows AS row
MATCH (n:EntityName {id: row.id})
SET n.embedding_model = $model
WITH n, row
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(n) AS written
