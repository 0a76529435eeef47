UNWIND $ids AS id
MATCH (t:Turn {id: id})
RETURN t {.id, .namespace, .session_id, .idx, .role, .speaker, .text, .ts, .external_id, .embedding_model} AS turn
