// `confirm` of a held entity merge: the untrusted mentions it names join their entity (the caller
// then rebuilds the entity from its mentions). No row: no such held merge in the namespace.
MATCH (t:Turn {namespace: $namespace})-[m:MENTIONS {held: $id}]->(e:Entity)
REMOVE m.held
RETURN DISTINCT e.id AS entity_id
