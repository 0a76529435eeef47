// For `kg reembed`: new context-key vectors.
UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
SET t.context_model = $model
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'context_embedding', row.embedding)
// Its session's vector revision moves on (queries.vectors reloads cached sessions whose revision changed);
// setting vectors_at first locks the session, so the increment below never loses a concurrent one.
WITH DISTINCT t.namespace AS namespace, t.session_id AS session_id
MATCH (s:Session {namespace: namespace, id: session_id})
SET s.vectors_at = datetime.realtime()
SET s.vectors_rev = coalesce(s.vectors_rev, 0) + 1
