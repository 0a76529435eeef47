// Approximate (HNSW) neighbours among the namespace's corrections, filtered to the namespace inside
// the index (Cypher 25 SEARCH), then to its live corrections of one trust level.
// Neo4j scores cosine as (1 + cos) / 2; `similarity` is the cosine itself, in [-1, 1].
CYPHER 25
MATCH (c:Correction)
  SEARCH c IN (VECTOR INDEX correction_embedding FOR $vector WHERE c.namespace = $namespace LIMIT $fetch) SCORE AS score
WITH c, 2 * score - 1 AS similarity
WHERE c.invalidated_at IS NULL AND coalesce(c.trust, 'trusted') = $trust AND similarity >= $min_similarity
ORDER BY similarity DESC, c.id
LIMIT $k
RETURN c {.id, .rule_key, .rule_text, .status, .reinforcement_count, .confidence, .half_life_days,
          .first_seen_at, .last_seen_at, .confirmed_at} AS correction, similarity,
       EXISTS { (c)-[:FROM_SESSION]->(:Session {namespace: $namespace, id: $session_id}) } AS in_session
