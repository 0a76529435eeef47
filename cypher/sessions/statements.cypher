// What one session's extraction asserted (relationships and facts), by any extractor version: each
// assert with its statement key, whether a later withdrawal took it back, and whether an assert of
// the same statement comes from elsewhere (another session, or a direct write), which keeps it
// standing when a re-extraction no longer finds it.
CALL () {
  MATCH (e:RelationEvent {namespace: $namespace, session_id: $session_id})
  WHERE e.op = 'assert' AND e.withdraws IS NULL
  MATCH (s:RelationSlot)-[:HAS_EVENT]->(e)
  RETURN 'relationship' AS kind, e {.*} AS event,
         EXISTS { (s)-[:HAS_EVENT]->(w:RelationEvent {withdraws: e.id}) } AS withdrawn,
         EXISTS { (s)-[:HAS_EVENT]->(o:RelationEvent {op: 'assert', object_id: e.object_id})
                  WHERE coalesce(o.session_id, '') <> $session_id AND o.withdraws IS NULL
                    AND NOT EXISTS { (s)-[:HAS_EVENT]->(:RelationEvent {withdraws: o.id}) } } AS corroborated
  UNION ALL
  MATCH (e:FactEvent {namespace: $namespace, session_id: $session_id})
  WHERE e.op = 'assert' AND e.withdraws IS NULL
  MATCH (s:FactSlot)-[:HAS_EVENT]->(e)
  RETURN 'fact' AS kind, e {.*} AS event,
         EXISTS { (s)-[:HAS_EVENT]->(w:FactEvent {withdraws: e.id}) } AS withdrawn,
         EXISTS { (s)-[:HAS_EVENT]->(o:FactEvent {op: 'assert', object_value: e.object_value})
                  WHERE coalesce(o.session_id, '') <> $session_id AND o.withdraws IS NULL
                    AND NOT EXISTS { (s)-[:HAS_EVENT]->(:FactEvent {withdraws: o.id}) } } AS corroborated
}
RETURN kind, event, withdrawn, corroborated
