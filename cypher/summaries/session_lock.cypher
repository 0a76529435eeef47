// Taken first in a summary write: concurrent summarizers of a session queue here. $sessions is a
// list of {namespace, id}, in one order for every writer (no deadlock between two batches).
UNWIND $sessions AS key
MATCH (s:Session {namespace: key.namespace, id: key.id})
SET s.summary_lock = coalesce(s.summary_lock, 0) + 1
RETURN s.id AS id
