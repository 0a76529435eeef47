UNWIND $ids AS id
MATCH (t:Turn {id: id})
RETURN t.id AS id
