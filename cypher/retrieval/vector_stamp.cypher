// A namespace's sessions in four numbers, [sessions, the sum of their vector revisions, the latest
// vector change in epoch ms, their turns]: any write of a turn or a turn vector, and any session
// added or deleted, moves it. The in-memory cache (queries.vectors) reads this before each search
// and reads retrieval/vector_revisions only when it moved.
MATCH (s:Session)
WHERE s.namespace = $namespace AND s.started_at IS NOT NULL
RETURN [count(s), sum(coalesce(s.vectors_rev, 0)), max(s.vectors_at.epochMillis),
        sum(coalesce(s.message_count, 0))] AS stamp
