// Sessions with turns not covered by their summary that are due: closed, idle since $idle_before,
// or grown by $every messages since the last summary. $namespace null: every namespace. The two
// branches let a namespace's sweep seek its sessions by index (`$namespace IS NULL OR ...` read
// every session of the database: 110 ms a call at 50k sessions, against 1-2 ms).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (s:Session {namespace: ns})
  RETURN s
  UNION
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (s:Session)
  RETURN s
}
WITH s
WHERE s.message_count > coalesce(s.summarized_count, 0)
  AND (s.status = 'closed' OR s.ended_at <= $idle_before
       OR s.message_count - coalesce(s.summarized_count, 0) >= $every)
RETURN s.namespace AS namespace, s.id AS id, s.message_count AS turns,
       s.status = 'closed' OR s.ended_at <= $idle_before AS closes
ORDER BY s.ended_at
LIMIT $limit
