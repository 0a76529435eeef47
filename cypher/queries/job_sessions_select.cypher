// Sessions to reindex for one job kind, which stamps `$stamp` (a Session property) with the
// version of what produced its output. `$stale`: only sessions stamped with another version;
// `$since`: sessions active since then; `$namespace` / `$session_id`: narrow it down.
MATCH (s:Session)
WHERE ($namespace IS NULL OR s.namespace = $namespace)
  AND ($session_id IS NULL OR s.id = $session_id)
  AND ($since IS NULL OR s.ended_at >= $since)
  AND (NOT $stale OR (s[$stamp] IS NOT NULL AND s[$stamp] <> $version))
RETURN s.namespace AS namespace, s.id AS id
ORDER BY s.namespace, s.ended_at
