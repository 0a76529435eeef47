// Id, facts-compatible key, type, name and trust of entities (the fact writer names subjects by key;
// only an entity made from untrusted content carries a trust).
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.key AS key, e.type AS type, e.name AS name, e.trust AS trust
