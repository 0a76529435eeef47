// The lock of one subject+predicate and its subject entity, created in their own transaction
// before the first write (a MERGE inside the writing transaction would take shared locks that
// queued writers then deadlock upgrading). Also gives an untyped entity its type.
MERGE (e:Entity {id: $subject.id})
  ON CREATE SET e.namespace = $namespace, e.key = $subject.key, e.name = $subject.name,
                e.type = $subject.type, e.created_at = datetime()
FOREACH (_ IN CASE WHEN e.type = 'other' AND $subject.type <> 'other' THEN [1] ELSE [] END |
  SET e.type = $subject.type)
MERGE (s:FactSlot {namespace: $namespace, subject_key: $subject.key, predicate: $predicate})
  ON CREATE SET s.created_at = datetime()
MERGE (s)-[lock:ABOUT]->(e)
  ON CREATE SET lock.writes = 0
