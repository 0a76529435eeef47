// Which of the proposed ids of new entities are taken: by a resolved entity (registered, has
// keys), or only by an entity the fact writer created from a subject name (adoptable).
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.keys IS NOT NULL AS registered, e.type AS type
