// Close sessions: $sessions is a list of {namespace, id}; returns the ones found (closing twice keeps
// the first closed_at).
UNWIND $sessions AS key
MATCH (s:Session {namespace: key.namespace, id: key.id})
SET s.status = 'closed', s.closed_at = coalesce(s.closed_at, $now)
RETURN s.namespace AS namespace, s.id AS id
