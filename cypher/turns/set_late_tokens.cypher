// Token vectors (late interaction, kg.core.embedders.late) of stored turns: row.tokens their signs packed,
// 48 bytes a token, made from the turn's key (ingest.turn_keys). `kg reembed`, an import and the backfill job.
UNWIND $rows AS row
MATCH (t:Turn {id: row.id})
SET t.late_tokens = row.tokens
// Its session's vector revision moves on (queries.vectors reloads cached sessions whose revision changed),
// as turns/set_embedding does.
WITH DISTINCT t.namespace AS namespace, t.session_id AS session_id
MATCH (s:Session {namespace: namespace, id: session_id})
SET s.vectors_at = datetime.realtime()
SET s.vectors_rev = coalesce(s.vectors_rev, 0) + 1
