// After an erase: the fact and relationship slots about these entities left empty go, then the
// entities nothing refers to any more (no mention, fact, slot or relationship), with their names,
// and the name keys and identifiers no other entity holds.
UNWIND $entity_ids AS id
MATCH (e:Entity {id: id})
CALL (e) {
  OPTIONAL MATCH (slot:FactSlot)-[:ABOUT]->(e)
  WHERE NOT (slot)-[:HAS_FACT]->() AND NOT (slot)-[:HAS_EVENT]->()
  DETACH DELETE slot
  RETURN count(slot) AS slots
}
CALL (e) {
  OPTIONAL MATCH (slot:RelationSlot)-[:ABOUT]->(e)
  WHERE NOT (slot)-[:HAS_EVENT]->()
  DETACH DELETE slot
  RETURN count(slot) AS relation_slots
}
WITH collect(e) AS entities, sum(slots) AS slots, sum(relation_slots) AS relation_slots
WITH slots, relation_slots, [e IN entities WHERE NOT EXISTS { ()-[:MENTIONS|SUBJECT|OBJECT|ABOUT]->(e) }
                             AND NOT EXISTS { (e)-[:RELATES_TO]-() }] AS doomed
CALL (doomed) {
  UNWIND doomed AS e
  MATCH (e)-[:HAS_KEY|IDENTIFIED_BY]->(k)
  RETURN collect(DISTINCT k) AS keys
}
CALL (doomed) {
  UNWIND doomed AS e
  MATCH (n:EntityName)-[:NAME_OF]->(e)
  DETACH DELETE n
  RETURN count(n) AS names
}
CALL (doomed) {
  UNWIND doomed AS e
  DETACH DELETE e
  RETURN count(e) AS entities
}
CALL (keys) {
  UNWIND keys AS k
  WITH k, k:NameKey AS is_key
  WHERE NOT EXISTS { (k)<-[:HAS_KEY|IDENTIFIED_BY]-() }
  DETACH DELETE k
  RETURN sum(CASE WHEN is_key THEN 1 ELSE 0 END) AS name_keys, sum(CASE WHEN is_key THEN 0 ELSE 1 END) AS identifiers
}
RETURN slots, relation_slots, entities, names, name_keys, identifiers
