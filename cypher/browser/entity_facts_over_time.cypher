// Everything known about one entity over time: each fact version with its valid interval
// (valid_from..valid_to), when it was recorded and, if belief changed, when it expired.
// Set as_of to a time to see only what held then (null: every version).
WITH 'demo-acme' AS namespace, 'Maya' AS name, null AS as_of  // the inputs: edit them
MATCH (e:Entity {namespace: namespace})
WHERE e.key = toLower(trim(name)) OR e.name = name
MATCH (e)<-[:SUBJECT]-(f:Fact)
WHERE as_of IS NULL
   OR (f.valid_from <= datetime(as_of) AND (f.valid_to IS NULL OR f.valid_to > datetime(as_of))
       AND f.expired_at IS NULL)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f.predicate AS predicate, f.object_value AS value, f.valid_from AS valid_from, f.valid_to AS valid_to,
       f.recorded_at AS recorded_at, f.expired_at AS expired_at, f.source AS source,
       f.reinforcement_count AS reinforced,
       CASE WHEN f.expired_at IS NOT NULL THEN 'expired' WHEN f.valid_to IS NULL THEN 'current'
            ELSE 'ended' END AS status,
       e, f, o
ORDER BY predicate, valid_from, recorded_at;
