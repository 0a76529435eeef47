MATCH (s:Session {namespace: $namespace, id: $session_id})-[:HAS_TURN]->(t:Turn)
RETURN t {.id, .namespace, .session_id, .idx, .role, .speaker, .text, .ts, .external_id, .embedding_model,
        .attachment_kinds, .attachment_captions, .attachment_urls, .verbatim, .trust} AS turn
ORDER BY t.idx
