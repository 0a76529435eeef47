// Stage 2 of two-stage retrieval on large namespaces: exact cosine inside the chosen sessions.
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.session_id IN $sessions AND t.idx IS NOT NULL
  AND t.embedding IS NOT NULL AND ($as_of IS NULL OR t.ts <= $as_of)
WITH t, vector.similarity.cosine(coalesce(t[$property], t.embedding), $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN t.id AS id, t.session_id AS session_id, t.idx AS idx, t.speaker AS speaker, t.ts AS ts, score,
       coalesce(t.follows_question, false) AS follows_question
