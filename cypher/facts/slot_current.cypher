// The values of one subject+predicate believed now and holding now (for the predicate resolver;
// read outside the writing transaction, so the LLM is never asked while the slot is locked).
MATCH (s:FactSlot {namespace: $namespace, subject_key: $subject_key, predicate: $predicate})-[:HAS_FACT]->(f:Fact)
WHERE f.expired_at IS NULL AND f.valid_to IS NULL
RETURN f.object_value AS value
ORDER BY f.valid_from
