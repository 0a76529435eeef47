// The relationships of one subject believed at $known_at (null: now) holding at valid time $as_of,
// optionally of one type; with $include_ended also those that had ended by then. With $known_at,
// `then` is the reinforcement count and last reinforcement as of that moment, from the asserts
// of the edge's object inside its interval learned by then (as for facts).
MATCH (a:Entity {namespace: $namespace, key: $subject_key})-[r:RELATES_TO]->(b:Entity)
WHERE r.lineage_id IS NOT NULL
  AND ($relation IS NULL OR r.relation = $relation)
  AND CASE WHEN $known_at IS NULL THEN r.expired_at IS NULL
           ELSE r.recorded_at <= $known_at AND (r.expired_at IS NULL OR r.expired_at > $known_at) END
  AND r.valid_from <= $as_of
  AND ($include_ended OR r.valid_to IS NULL OR r.valid_to > $as_of)
CALL (a, r, b) {
  OPTIONAL MATCH (s:RelationSlot {namespace: $namespace, subject_id: a.id, relation: r.relation})
  WHERE $known_at IS NOT NULL
  OPTIONAL MATCH (s)-[:HAS_EVENT]->(ev:RelationEvent {op: 'assert', object_id: b.id})
  WHERE ev.withdraws IS NULL AND ev.valid_from >= r.valid_from
    AND (r.valid_to IS NULL OR ev.valid_from < r.valid_to) AND ev.recorded_at <= $known_at
    AND NOT EXISTS { (s)-[:HAS_EVENT]->(w:RelationEvent {withdraws: ev.id}) WHERE w.recorded_at <= $known_at }
  WITH ev ORDER BY ev.valid_from, ev.recorded_at, ev.id
  WITH collect(ev.recorded_at) AS learned
  RETURN CASE WHEN $known_at IS NULL THEN null ELSE {
    reinforcement_count: CASE WHEN size(learned) > 0 THEN size(learned) - 1 ELSE 0 END,
    last_reinforced_at: reduce(m = null, x IN tail(learned) | CASE WHEN m IS NULL OR x > m THEN x ELSE m END)
  } END AS then
}
RETURN r {.*} AS edge, a.name AS subject, a.key AS subject_key, b.name AS object, b.key AS object_key,
       b.id AS object_id, then
ORDER BY r.relation, r.valid_from, b.key
