UNWIND $rows AS row
MATCH (sm:Summary {id: row.id})
SET sm.embedding_model = $model
WITH sm, row
CALL db.create.setNodeVectorProperty(sm, 'embedding', row.embedding)
