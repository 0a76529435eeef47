// Sessions with turns not covered by their summary that are due: closed, idle since $idle_before,
// or grown by $every messages since the last summary. $namespace null: every namespace.
MATCH (s:Session)
WHERE ($namespace IS NULL OR s.namespace = $namespace)
  AND s.message_count > coalesce(s.summarized_count, 0)
  AND (s.status = 'closed' OR s.ended_at <= $idle_before
       OR s.message_count - coalesce(s.summarized_count, 0) >= $every)
RETURN s.namespace AS namespace, s.id AS id, s.message_count AS turns,
       s.status = 'closed' OR s.ended_at <= $idle_before AS closes
ORDER BY s.ended_at
LIMIT $limit
