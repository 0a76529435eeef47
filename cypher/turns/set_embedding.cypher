// row.text: the key the vector was made from (ingest.turn_keys), kept as key_text for BM25; row.passages
// its later parts' vectors (null: one part). A vector of the fallback embedder it replaces is removed.
UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
SET t.embedding_model = $model, t.key_text = row.text
REMOVE t.fallback_embedding, t.passage_embeddings
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'embedding', row.embedding)
CALL (t, row) {
  WITH t, row WHERE row.passages IS NOT NULL
  CALL db.create.setNodeVectorProperty(t, 'passage_embeddings', row.passages)
}
// Its session's vector revision moves on (queries.vectors reloads cached sessions whose revision changed);
// setting vectors_at first locks the session, so the increment below never loses a concurrent one.
WITH DISTINCT t.namespace AS namespace, t.session_id AS session_id
MATCH (s:Session {namespace: namespace, id: session_id})
SET s.vectors_at = datetime.realtime()
SET s.vectors_rev = coalesce(s.vectors_rev, 0) + 1
