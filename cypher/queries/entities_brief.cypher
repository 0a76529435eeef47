// Id, facts-compatible key, type and name of entities (the fact writer names subjects by key).
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.key AS key, e.type AS type, e.name AS name
