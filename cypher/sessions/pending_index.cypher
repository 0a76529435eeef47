// Sessions to index: closed (or idle since $idle_before), with turns, and either never indexed by
// the extractor version $version, grown since, or failed fewer than $max_failures times.
// $namespace null: every namespace; else that namespace's sessions, sought by index (as in due.cypher).
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
WHERE s.message_count > 0
  AND (s.status = 'closed' OR s.ended_at <= $idle_before)
  AND CASE coalesce(s.extraction_status, 'new')
        WHEN 'extraction_failed' THEN coalesce(s.extraction_failures, 0) < $max_failures
        ELSE coalesce(s.extraction_version, '') <> $version OR coalesce(s.extracted_count, 0) < s.message_count
      END
RETURN s.namespace AS namespace, s.id AS id
ORDER BY s.ended_at, s.namespace, s.id
LIMIT $limit
