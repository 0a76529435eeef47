// Taken first in a summary write: concurrent summarizers of one session queue here.
MATCH (s:Session {namespace: $namespace, id: $session_id})
SET s.summary_lock = coalesce(s.summary_lock, 0) + 1
RETURN s.id AS id
