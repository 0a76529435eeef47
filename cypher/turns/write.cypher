// New turns only (the caller filtered existing ids); the embedding is stored as a float32 vector, in
// fallback_embedding when the fallback embedder made it (row.fallback: kg.core.embedders.fallback).
// key_text is what was embedded and what the turn_key_text fulltext index holds (ingest.turn_keys); a long
// key's later parts' vectors are passage_embeddings, end to end in one float32 list (none for a key of one part);
// late_tokens its token vectors' signs, 48 bytes a token (kg.core.embedders.late; null: late interaction off).
// Each session's vector revision moves on once (see turns/set_embedding).
CALL {
  UNWIND $turns AS row
  WITH DISTINCT row.namespace AS namespace, row.session_id AS session_id
  MATCH (s:Session {namespace: namespace, id: session_id})
  SET s.vectors_at = datetime.realtime()
  SET s.vectors_rev = coalesce(s.vectors_rev, 0) + 1
}
UNWIND $turns AS row
MATCH (s:Session {namespace: row.namespace, id: row.session_id})
MERGE (t:Turn {id: row.id})
  ON CREATE SET t.namespace = row.namespace, t.session_id = row.session_id, t.idx = row.idx,
                t.role = row.role, t.speaker = row.speaker, t.text = row.text, t.ts = row.ts, t.external_id = row.external_id,
                t.verbatim = row.verbatim,
                t.key_text = row.key_text, t.attachment_kinds = row.attachment_kinds,
                t.attachment_captions = row.attachment_captions, t.attachment_urls = row.attachment_urls,
                t.embedding_model = row.embedding_model, t.trust = row.trust, t.late_tokens = row.late,
                t.created_at = datetime()
MERGE (s)-[:HAS_TURN]->(t)
WITH t, row
CALL db.create.setNodeVectorProperty(t, CASE WHEN row.fallback THEN 'fallback_embedding' ELSE 'embedding' END,
                                     row.embedding)
CALL (t, row) {
  WITH t, row WHERE row.passages IS NOT NULL
  CALL db.create.setNodeVectorProperty(t, 'passage_embeddings', row.passages)
}
WITH t, row WHERE row.prev_id IS NOT NULL
MATCH (p:Turn {id: row.prev_id})
MERGE (p)-[:NEXT]->(t)
