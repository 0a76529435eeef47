// Approximate (HNSW) search, over-fetched then filtered to the namespace.
CALL db.index.vector.queryNodes('turn_embedding', $fetch, $vector) YIELD node, score
WHERE node.namespace = $namespace
RETURN node {.id, .namespace, .session_id, .idx, .role, .speaker, .text, .ts, .external_id, .embedding_model} AS turn, score
ORDER BY score DESC
LIMIT $k
