MATCH (t:Turn {id: $id})
WHERE t.namespace = $namespace
RETURN t {.id, .namespace, .session_id, .idx, .role, .speaker, .text, .ts, .external_id, .embedding_model,
        .attachment_kinds, .attachment_captions, .attachment_urls, .verbatim, .trust} AS turn
