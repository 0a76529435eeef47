// Exact cosine over one namespace's live corrections of one trust level (small namespaces): an
// untrusted correction never reinforces or invalidates a trusted one, nor the reverse. Neo4j scores cosine as
// (1 + cos) / 2; `similarity` is the cosine itself, in [-1, 1].
MATCH (c:Correction)
WHERE c.namespace = $namespace AND c.invalidated_at IS NULL AND coalesce(c.trust, 'trusted') = $trust AND c.embedding IS NOT NULL
WITH c, 2 * vector.similarity.cosine(c.embedding, $vector) - 1 AS similarity
WHERE similarity >= $min_similarity
ORDER BY similarity DESC, c.id
LIMIT $k
RETURN c {.id, .rule_key, .rule_text, .status, .reinforcement_count, .confidence, .half_life_days,
          .first_seen_at, .last_seen_at, .confirmed_at} AS correction, similarity,
       EXISTS { (c)-[:FROM_SESSION]->(:Session {namespace: $namespace, id: $session_id}) } AS in_session
