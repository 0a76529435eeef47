// A fact's evidence: the turns of the asserts of its value inside its interval (the event that
// opened it and those that reinforced it).
MATCH (s:FactSlot {namespace: $namespace, subject_key: $subject_key, predicate: $predicate})
UNWIND $fact_ids AS fact_id
MATCH (s)-[:HAS_FACT]->(f:Fact {id: fact_id})
MATCH (s)-[:HAS_EVENT]->(e:FactEvent {op: 'assert'})-[:EVIDENCED_BY]->(t:Turn)
WHERE e.object_value = f.object_value AND e.valid_from >= f.valid_from
  AND (f.valid_to IS NULL OR e.valid_from < f.valid_to)
MERGE (f)-[:EVIDENCED_BY]->(t)
