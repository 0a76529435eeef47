// Create-or-lock the sessions a batch writes to (sorted by the caller, so concurrent writers lock
// in one order), widen their time span, and return where each session's turn chain ends.
UNWIND $sessions AS row
MERGE (s:Session {namespace: row.namespace, id: row.id})
  ON CREATE SET s.started_at = row.started_at, s.ended_at = row.ended_at, s.status = 'open',
                s.message_count = 0, s.created_at = datetime()
SET s.started_at = CASE WHEN row.started_at < s.started_at THEN row.started_at ELSE s.started_at END,
    s.ended_at = CASE WHEN row.ended_at > s.ended_at THEN row.ended_at ELSE s.ended_at END,
    s.updated_at = datetime()
RETURN s.namespace AS namespace, s.id AS id, s.message_count AS message_count, s.last_turn_id AS last_turn_id
