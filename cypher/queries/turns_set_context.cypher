// A turn's context key: the text of its window and that text's vector; and whether the turn
// before it asked a question (retrieval passes a question's score on to its answer).
UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
SET t.context_text = row.text, t.context_model = $model, t.follows_question = row.follows_question
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'context_embedding', row.embedding)
