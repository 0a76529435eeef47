// Benchmarks only (bench/temporal.py --scale): single-version facts in bulk, each with its
// subject entity, slot and assert event, as `remember` would have left them.
UNWIND $rows AS row
MERGE (e:Entity {id: row.entity_id})
  ON CREATE SET e.namespace = $namespace, e.key = row.subject_key, e.name = row.subject_key,
                e.type = 'other', e.created_at = datetime()
CREATE (s:FactSlot {namespace: $namespace, subject_key: row.subject_key, predicate: row.predicate,
                    created_at: datetime()})
CREATE (s)-[:ABOUT {writes: 1}]->(e)
CREATE (ev:FactEvent {id: row.event_id, namespace: $namespace, subject_key: row.subject_key,
                      predicate: row.predicate, op: 'assert', object_value: row.object_value,
                      source: row.source, valid_from: row.valid_from, recorded_at: row.recorded_at,
                      evidence_count: 0})
CREATE (s)-[:HAS_EVENT]->(ev)
CREATE (f:Fact {id: row.fact_id, namespace: $namespace, subject_key: row.subject_key,
                predicate: row.predicate, object_value: row.object_value, valid_from: row.valid_from,
                recorded_at: row.recorded_at, source: row.source, lineage_id: row.fact_id,
                reinforcement_count: 0})
CREATE (s)-[:HAS_FACT]->(f)
CREATE (f)-[:SUBJECT]->(e)
