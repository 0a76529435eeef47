// Exact cosine over one namespace: used when the index over-fetch found fewer than k of its turns.
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.ts IS NOT NULL AND t.embedding IS NOT NULL  // ts: seek the (namespace, ts) index
WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN t {.id, .namespace, .session_id, .idx, .role, .speaker, .text, .ts, .external_id, .embedding_model} AS turn, score
