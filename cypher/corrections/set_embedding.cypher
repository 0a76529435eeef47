// `kg reembed`: store re-computed correction vectors.
UNWIND $rows AS row
MATCH (c:Correction {id: row.id})
SET c.embedding_model = $model
WITH c, row
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
