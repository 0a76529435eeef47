// Each session of a namespace with its vector revision (bumped by every write of a turn vector), as one
// row of [session_id, revision, changed in epoch ms]: the in-memory vector cache (queries.vectors)
// reloads the sessions whose revision changed.
MATCH (s:Session)
WHERE s.namespace = $namespace AND s.started_at IS NOT NULL
RETURN collect([s.id, coalesce(s.vectors_rev, 0), s.vectors_at.epochMillis]) AS sessions
