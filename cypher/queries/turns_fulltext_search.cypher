// BM25 over turn text; $query is escaped Lucene syntax built by the store, never raw user text.
CALL db.index.fulltext.queryNodes('turn_text', $query) YIELD node, score
WHERE node.namespace = $namespace
RETURN node {.id, .namespace, .session_id, .idx, .role, .speaker, .text, .ts, .external_id, .embedding_model} AS turn, score
ORDER BY score DESC
LIMIT $k
