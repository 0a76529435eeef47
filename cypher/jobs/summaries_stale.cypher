// Sessions whose current session summary another summarizer made: another model, a prompt version
// not among the current ones (turns, rollups), or vectors of another embedder. Filters optional.
// $namespace given: its session summaries are sought by index, the other tenants' never read (with
// `$namespace IS NULL OR ...` every session summary of the database was).
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (n:Summary {namespace: ns, kind: 'session'})-[:SUMMARIZES]->(s:Session)
  USING INDEX SEEK n:Summary(namespace, kind)
  RETURN n, s
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (n:Summary {kind: 'session'})-[:SUMMARIZES]->(s:Session)
  RETURN n, s
}
WITH n, s
WHERE n.expired_at IS NULL
  AND ($session_id IS NULL OR s.id = $session_id)
  AND ($since IS NULL OR s.ended_at >= $since)
  AND (n.model <> $model OR NOT n.prompt_version IN $prompt_versions
       OR coalesce(n.embedding_model, $embedding_model) <> $embedding_model)
RETURN DISTINCT s.namespace AS namespace, s.id AS id
