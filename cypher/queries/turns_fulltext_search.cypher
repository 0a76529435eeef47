// BM25 over turn keys (speaker, text, attachments) in one namespace; $query is escaped Lucene scoped to it (queries.turns.scoped), never raw user text.
CALL db.index.fulltext.queryNodes('turn_key_text', $query) YIELD node, score
WHERE score > 0 AND node.namespace = $namespace  // score 0: only the namespace clause matched
RETURN node {.id, .namespace, .session_id, .idx, .role, .speaker, .text, .ts, .external_id, .embedding_model} AS turn, score
ORDER BY score DESC
LIMIT $k
