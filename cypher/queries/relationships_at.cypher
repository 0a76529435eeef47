// The relationships of one subject believed at $known_at (null: now) holding at valid time $as_of,
// optionally of one type; with $include_ended also those that had ended by then.
MATCH (a:Entity {namespace: $namespace, key: $subject_key})-[r:RELATES_TO]->(b:Entity)
WHERE r.lineage_id IS NOT NULL
  AND ($relation IS NULL OR r.relation = $relation)
  AND CASE WHEN $known_at IS NULL THEN r.expired_at IS NULL
           ELSE r.recorded_at <= $known_at AND (r.expired_at IS NULL OR r.expired_at > $known_at) END
  AND r.valid_from <= $as_of
  AND ($include_ended OR r.valid_to IS NULL OR r.valid_to > $as_of)
RETURN r {.*} AS edge, a.name AS subject, a.key AS subject_key, b.name AS object, b.key AS object_key,
       b.id AS object_id
ORDER BY r.relation, r.valid_from, b.key
