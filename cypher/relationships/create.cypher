// New edge versions of one subject+relationship type, from the slot's subject to each object.
MATCH (:RelationSlot {namespace: $namespace, subject_id: $subject_id, relation: $relation})-[:ABOUT]->(a:Entity)
UNWIND $edges AS row
MATCH (b:Entity {id: row.object_id})
CREATE (a)-[r:RELATES_TO]->(b)
SET r = row.props
