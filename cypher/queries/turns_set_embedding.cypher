UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
SET t.embedding_model = $model
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'embedding', row.embedding)
