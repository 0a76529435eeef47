// Every version of a subject's facts (one predicate, or all): the timeline believed at $known_at
// (null: now), and with $include_expired also the versions belief has since replaced, each with the
// events that recorded and expired it (an event's transaction time is that of what it changed).
// Read-only.
MATCH (e:Entity {namespace: $namespace, key: $subject_key})<-[:SUBJECT]-(f:Fact)
WHERE ($predicate IS NULL OR f.predicate = $predicate)
  AND ($include_expired
       OR CASE WHEN $known_at IS NULL THEN f.expired_at IS NULL
               ELSE f.recorded_at <= $known_at AND (f.expired_at IS NULL OR f.expired_at > $known_at) END)
CALL (f) {
  OPTIONAL MATCH (f)<-[:SUPERSEDES]-(n:Fact)
  WHERE $include_expired
     OR CASE WHEN $known_at IS NULL THEN n.expired_at IS NULL
             ELSE n.recorded_at <= $known_at AND (n.expired_at IS NULL OR n.expired_at > $known_at) END
  RETURN n.id AS superseded_by
  ORDER BY n.expired_at IS NULL DESC, n.recorded_at DESC
  LIMIT 1
}
CALL (f) {
  MATCH (slot:FactSlot)-[:HAS_FACT]->(f)
  RETURN COLLECT { MATCH (slot)-[:HAS_EVENT]->(r:FactEvent) WHERE r.recorded_at = f.recorded_at
                   RETURN r {event_id: r.id, .op, change: coalesce(r.kind, CASE WHEN r.withdraws IS NOT NULL
                             THEN 'withdrawal' END), .object_value, .recorded_at, .reason} } AS recorded,
         COLLECT { MATCH (slot)-[:HAS_EVENT]->(x:FactEvent) WHERE x.recorded_at = f.expired_at
                   RETURN x {event_id: x.id, .op, change: coalesce(x.kind, CASE WHEN x.withdraws IS NOT NULL
                             THEN 'withdrawal' END), .object_value, .recorded_at, .reason} } AS expired
}
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.*} AS fact, e.name AS subject, o.id AS object_entity_id, superseded_by, head(recorded) AS recorded_by,
       head(expired) AS expired_by
ORDER BY f.predicate, f.valid_from, f.recorded_at, f.object_value
