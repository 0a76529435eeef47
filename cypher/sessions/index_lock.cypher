// Lock one session for indexing (concurrent indexers of it queue here) and return what an earlier
// indexing of it linked (the entity each surface form of each type was resolved to) and the
// extractor version that wrote it (null: never indexed).
MATCH (s:Session {namespace: $namespace, id: $session_id})
SET s.locked = true
REMOVE s.locked
RETURN s.message_count AS message_count, s.extraction_version AS previous_version,
       [(s)-[:HAS_TURN]->(:Turn)-[m:MENTIONS]->(e:Entity) WHERE m.session_id = s.id
        | {surface_key: m.surface_key, type: m.type, id: e.id}] AS known
