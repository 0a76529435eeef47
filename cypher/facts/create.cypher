// New fact versions of one slot, linked to the slot, their subject and, when the object is an
// entity, their object. Entities are merged by their derived id (unique), so concurrent writers
// of one object meet on the same node.
MATCH (s:FactSlot {namespace: $namespace, subject_key: $subject_key, predicate: $predicate})-[:ABOUT]->(subject:Entity)
UNWIND $facts AS row
CREATE (f:Fact)
SET f = row.props
CREATE (s)-[:HAS_FACT]->(f)
CREATE (f)-[:SUBJECT]->(subject)
WITH f, row
WHERE row.object IS NOT NULL
MERGE (o:Entity {id: row.object.id})
  ON CREATE SET o.namespace = $namespace, o.key = row.object.key, o.name = row.object.name,
                o.type = row.object.type, o.created_at = datetime()
CREATE (f)-[:OBJECT]->(o)
