// A turn's context key: the text of its window and its vector (the turn's own and its neighbours',
// ingest.summaries.keys; null when the turn has no vector of the primary model); and whether the turn
// before it asked a question (retrieval passes a question's score on to its answer).
UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
SET t.context_text = row.text, t.context_model = $model, t.follows_question = row.follows_question
WITH t, row
CALL (t, row) {
  WITH t, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(t, 'context_embedding', row.embedding)
}
// Its session's vector revision moves on (queries.vectors reloads cached sessions whose revision changed);
// setting vectors_at first locks the session, so the increment below never loses a concurrent one.
WITH DISTINCT t.namespace AS namespace, t.session_id AS session_id
MATCH (s:Session {namespace: namespace, id: session_id})
SET s.vectors_at = datetime.realtime()
SET s.vectors_rev = coalesce(s.vectors_rev, 0) + 1
// where it left the revision: the process's vector cache takes the new vectors at it (queries.vectors)
RETURN s.namespace AS namespace, s.id AS id, s.vectors_rev AS revision, s.vectors_at.epochMillis AS changed
