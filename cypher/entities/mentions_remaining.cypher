// For rebuilding entities after an erase: each entity with the mentions that remain, oldest first,
// and what each taught (extracted aliases and attributes; null on links written before these were
// kept, and then the entity is left as it is).
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.type AS type, e.name AS name, e.keys IS NOT NULL AS registered,
       COLLECT { MATCH (t:Turn)-[m:MENTIONS]->(e)
                 WITH t, m ORDER BY t.ts, t.id
                 RETURN {session_id: m.session_id, surface: m.surface, surface_key: m.surface_key, type: m.type,
                         aliases: m.aliases, attributes: m.attributes, held: m.held} } AS mentions
