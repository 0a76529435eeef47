// Indexed sessions whose extraction another extractor, model or prompt version made ($version is
// the current `extractor:model:prompt_version`). Filters optional.
// $namespace given: its sessions are sought by index, the other tenants' never read (with
// `$namespace IS NULL OR ...` every session of the database was).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (s:Session {namespace: ns}) USING INDEX SEEK s:Session(namespace)  // not every tenant's indexed ones
  WHERE s.extraction_status = 'indexed'
  RETURN s
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (s:Session)
  WHERE s.extraction_status = 'indexed'
  RETURN s
}
WITH s
WHERE s.extraction_version <> $version
  AND ($session_id IS NULL OR s.id = $session_id)
  AND ($since IS NULL OR s.ended_at >= $since)
RETURN s.namespace AS namespace, s.id AS id
ORDER BY s.namespace, s.ended_at
