// A turn's context key: the text of its window and that text's vector.
UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
SET t.context_text = row.text, t.context_model = $model
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'context_embedding', row.embedding)
