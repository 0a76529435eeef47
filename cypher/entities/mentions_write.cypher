// (Turn)-[:MENTIONS]->(Entity) for every evidence turn of every extracted entity, stamped with the
// extraction that found it and what the mention taught (its extracted aliases and attributes, read
// back when an erase rebuilds the entity from what remains); MERGE keeps re-indexing from
// duplicating links. `held`: an untrusted mention of a trusted entity, kept out of it until confirmed.
UNWIND $rows AS row
MATCH (t:Turn {id: row.turn_id})
WHERE t.namespace = $namespace
MATCH (e:Entity {id: row.entity_id})
MERGE (t)-[m:MENTIONS]->(e)
SET m.session_id = $session_id, m.surface = row.surface, m.surface_key = row.surface_key, m.type = row.type,
    m.aliases = row.aliases, m.attributes = row.attributes, m.held = row.held, m += $stamp
RETURN count(m) AS linked
