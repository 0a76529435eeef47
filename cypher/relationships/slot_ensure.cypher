// The lock of one subject+relationship type, its subject entity and the object entity, created in
// their own transaction (or first in the indexing one) before the slot is locked: a MERGE inside
// the locked part would take shared locks that queued writers then deadlock upgrading.
MERGE (a:Entity {id: $subject.id})
  ON CREATE SET a.namespace = $namespace, a.key = $subject.key, a.name = $subject.name,
                a.type = $subject.type, a.created_at = datetime()
MERGE (b:Entity {id: $object.id})
  ON CREATE SET b.namespace = $namespace, b.key = $object.key, b.name = $object.name,
                b.type = $object.type, b.created_at = datetime()
MERGE (s:RelationSlot {namespace: $namespace, subject_id: $subject.id, relation: $relation})
  ON CREATE SET s.created_at = datetime()
MERGE (s)-[lock:ABOUT]->(a)
  ON CREATE SET lock.writes = 0
