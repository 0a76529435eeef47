// The facts of one subject believed at $known_at (null: now) whose valid interval holds at $as_of,
// plus, when $include_superseded, those that had already ended by then. Each read touches
// last_accessed_at and returns the value it had before, which the confidence score uses.
MATCH (e:Entity {namespace: $namespace, key: $subject_key})<-[:SUBJECT]-(f:Fact)
WHERE ($predicate IS NULL OR f.predicate = $predicate)
  AND CASE WHEN $known_at IS NULL THEN f.expired_at IS NULL
           ELSE f.recorded_at <= $known_at AND (f.expired_at IS NULL OR f.expired_at > $known_at) END
  AND f.valid_from <= $as_of
  AND ($include_superseded OR f.valid_to IS NULL OR f.valid_to > $as_of)
CALL (f) {
  OPTIONAL MATCH (f)<-[:SUPERSEDES]-(n:Fact)
  WHERE CASE WHEN $known_at IS NULL THEN n.expired_at IS NULL
             ELSE n.recorded_at <= $known_at AND (n.expired_at IS NULL OR n.expired_at > $known_at) END
  RETURN n.id AS superseded_by
  ORDER BY n.recorded_at DESC
  LIMIT 1
}
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
WITH e, f, o, superseded_by, f.last_accessed_at AS last_accessed_at
SET f.last_accessed_at = $now
RETURN f {.*, last_accessed_at: last_accessed_at} AS fact, e.name AS subject, o.id AS object_entity_id,
       superseded_by
ORDER BY f.predicate, f.valid_from, f.object_value
