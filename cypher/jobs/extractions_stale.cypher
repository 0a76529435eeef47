// Indexed sessions whose extraction another extractor, model or prompt version made ($version is
// the current `extractor:model:prompt_version`). Filters optional.
MATCH (s:Session)
WHERE s.extraction_status = 'indexed' AND s.extraction_version <> $version
  AND ($namespace IS NULL OR s.namespace = $namespace)
  AND ($session_id IS NULL OR s.id = $session_id)
  AND ($since IS NULL OR s.ended_at >= $since)
RETURN s.namespace AS namespace, s.id AS id
ORDER BY s.namespace, s.ended_at
