// For `kg reembed`: new summary vectors.
UNWIND $rows AS row
MATCH (s:Summary {id: row.id})
SET s.embedding_model = $model
WITH s, row
CALL db.create.setNodeVectorProperty(s, 'embedding', row.embedding)
