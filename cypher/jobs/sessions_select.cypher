// Sessions chosen for `kg reindex --since / --session`: active since $since, of $namespace, or one
// session; every filter is optional.
// $namespace given: its sessions are sought by index, the other tenants' never read (with
// `$namespace IS NULL OR ...` every session of the database was).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (s:Session {namespace: ns}) USING INDEX SEEK s:Session(namespace)
  RETURN s
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (s:Session)
  RETURN s
}
WITH s
WHERE ($session_id IS NULL OR s.id = $session_id)
  AND ($since IS NULL OR s.ended_at >= $since)
RETURN s.namespace AS namespace, s.id AS id
ORDER BY s.namespace, s.ended_at
