// A namespace's sessions in four numbers, [sessions, the sum of their vector revisions, the latest
// vector change in epoch ms (-1: none), their turns]: any write of a turn or a turn vector, and any
// session added or deleted, moves it. The in-memory cache (queries.vectors) reads this before each
// search with the stamp it holds as $known; only when the stamp moved does the same read bring each
// session as [session_id, revision, changed in epoch ms, turns] (else `sessions` is null), so a
// changed namespace costs one round trip, not two.
MATCH (s:Session)
WHERE s.namespace = $namespace AND s.started_at IS NOT NULL
WITH [count(s), sum(coalesce(s.vectors_rev, 0)), coalesce(max(s.vectors_at.epochMillis), -1),
      sum(coalesce(s.message_count, 0))] AS stamp,
     collect([s.id, coalesce(s.vectors_rev, 0), s.vectors_at.epochMillis, s.message_count]) AS sessions
RETURN stamp, CASE WHEN stamp = $known THEN null ELSE sessions END AS sessions
