// Create-or-lock the sessions a batch writes to (sorted by the caller, so concurrent writers lock
// in one order), widen their time span, and return where each session's turn chain ends and when
// its last turn was (null for a new session): an earlier new turn makes the session renumbered.
UNWIND $sessions AS row
MERGE (s:Session {namespace: row.namespace, id: row.id})
  ON CREATE SET s.started_at = row.started_at, s.ended_at = row.ended_at, s.status = 'open',
                s.message_count = 0, s.created_at = datetime()
SET s.updated_at = datetime()  // the write lock first: what is read next is not stale
WITH s, row, CASE WHEN s.message_count > 0 THEN s.ended_at END AS ended_before
SET s.started_at = CASE WHEN row.started_at < s.started_at THEN row.started_at ELSE s.started_at END,
    s.ended_at = CASE WHEN row.ended_at > s.ended_at THEN row.ended_at ELSE s.ended_at END
RETURN s.namespace AS namespace, s.id AS id, s.message_count AS message_count, s.last_turn_id AS last_turn_id,
       ended_before
