// Each session of a namespace with its vector revision (bumped by every write of a turn vector), as one
// row of [session_id, revision, changed in epoch ms, turns]: the in-memory cache (queries.vectors)
// reloads the sessions whose revision changed, and knows whether it holds every turn.
MATCH (s:Session)
WHERE s.namespace = $namespace AND s.started_at IS NOT NULL
RETURN collect([s.id, coalesce(s.vectors_rev, 0), s.vectors_at.epochMillis, s.message_count]) AS sessions
