// Stored turns saying what a message without a session id says (same namespace, timestamp, role,
// speaker and text), in whichever session they were stored: the same message is one turn.
UNWIND $turns AS t
MATCH (x:Turn {namespace: t.namespace, ts: t.ts})
WHERE x.role = t.role AND coalesce(x.speaker, '') = t.speaker AND x.text = t.text
RETURN DISTINCT t.key AS key, x.id AS id, x.session_id AS session_id
