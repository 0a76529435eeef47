// Sessions whose current session summary another summarizer made: another model, a prompt version
// not among the current ones (turns, rollups), or vectors of another embedder. Filters optional.
MATCH (n:Summary {kind: 'session'})-[:SUMMARIZES]->(s:Session)
WHERE n.expired_at IS NULL
  AND ($namespace IS NULL OR s.namespace = $namespace)
  AND ($session_id IS NULL OR s.id = $session_id)
  AND ($since IS NULL OR s.ended_at >= $since)
  AND (n.model <> $model OR NOT n.prompt_version IN $prompt_versions
       OR coalesce(n.embedding_model, $embedding_model) <> $embedding_model)
RETURN DISTINCT s.namespace AS namespace, s.id AS id
