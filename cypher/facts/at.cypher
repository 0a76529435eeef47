// The facts of one subject believed at $known_at (null: now) whose valid interval holds at $as_of,
// plus, when $include_superseded, those that had already ended by then. Each read touches
// last_accessed_at and returns the value it had before, which the confidence score uses; it is
// also kept as a read event in read_at (at most one a minute).
// With $known_at, `then` is the fact as it stood at that moment: its reinforcement count and last
// reinforcement from the events learned by then, its last read at or before $read_until from the
// read events of every version of its lineage.
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
CALL (f) {
  OPTIONAL MATCH (s:FactSlot)-[:HAS_FACT]->(f)
  WHERE $known_at IS NOT NULL
  OPTIONAL MATCH (s)-[:HAS_EVENT]->(ev:FactEvent {op: 'assert'})
  WHERE ev.object_value = f.object_value AND ev.withdraws IS NULL AND ev.valid_from >= f.valid_from
    AND (f.valid_to IS NULL OR ev.valid_from < f.valid_to) AND ev.recorded_at <= $known_at
    AND NOT EXISTS { (s)-[:HAS_EVENT]->(w:FactEvent {withdraws: ev.id}) WHERE w.recorded_at <= $known_at }
  WITH s, ev ORDER BY ev.valid_from, ev.recorded_at, ev.id
  WITH s, collect(ev.recorded_at) AS learned
  OPTIONAL MATCH (s)-[:HAS_FACT]->(g:Fact {lineage_id: f.lineage_id})
  WITH learned, reduce(acc = [], reads IN collect(coalesce(g.read_at, [])) | acc + reads) AS reads
  RETURN CASE WHEN $known_at IS NULL THEN null ELSE {
    reinforcement_count: CASE WHEN size(learned) > 0 THEN size(learned) - 1 ELSE 0 END,
    last_reinforced_at: reduce(m = null, x IN tail(learned) | CASE WHEN m IS NULL OR x > m THEN x ELSE m END),
    last_accessed_at: reduce(m = null, x IN reads |
                             CASE WHEN x <= $read_until AND (m IS NULL OR x > m) THEN x ELSE m END)
  } END AS then
}
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
WITH e, f, o, superseded_by, then, f.last_accessed_at AS last_accessed_at
SET f.last_accessed_at = $now,
    f.read_at = CASE WHEN size(coalesce(f.read_at, [])) > 0 AND f.read_at[-1] > $now - duration({minutes: 1})
                     THEN f.read_at ELSE coalesce(f.read_at, []) + [$now] END
RETURN f {.*, last_accessed_at: last_accessed_at, read_at: null} AS fact, e.name AS subject,
       o.id AS object_entity_id, superseded_by, then
ORDER BY f.predicate, f.valid_from, f.object_value
