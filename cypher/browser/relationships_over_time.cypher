// Relationships over time: every version of one entity's edges with its valid interval
// (valid_from..valid_to), when it was recorded and, if belief changed, when it expired, and the
// events behind it. Set as_of to see what held then and known_at to see what was believed then
// (null: every version; as_of without known_at: the current belief).
WITH 'demo-acme' AS namespace, 'Maya' AS name, null AS as_of, null AS known_at  // the inputs: edit them
MATCH (a:Entity {namespace: namespace})
WHERE a.key = toLower(trim(name)) OR a.name = name
MATCH (a)-[r:RELATES_TO]->(b:Entity)
WHERE r.lineage_id IS NOT NULL
  AND (as_of IS NULL
       OR (r.valid_from <= datetime(as_of) AND (r.valid_to IS NULL OR r.valid_to > datetime(as_of))))
  AND CASE WHEN known_at IS NOT NULL
           THEN r.recorded_at <= datetime(known_at)
                AND (r.expired_at IS NULL OR r.expired_at > datetime(known_at))
           WHEN as_of IS NOT NULL THEN r.expired_at IS NULL
           ELSE true END
OPTIONAL MATCH (:RelationSlot {namespace: namespace, subject_id: a.id, relation: r.relation})
               -[:HAS_EVENT]->(e:RelationEvent {object_id: b.id})
WITH a, r, b, collect(e {.op, .valid_from, .recorded_at, .session_id, .reason}) AS events
RETURN a.name AS subject, r.relation AS type, b.name AS object, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.recorded_at AS recorded_at, r.expired_at AS expired_at,
       r.reinforcement_count AS reinforced, r.extractor AS extractor, r.prompt_version AS prompt_version,
       CASE WHEN r.expired_at IS NOT NULL THEN 'expired' WHEN r.valid_to IS NULL THEN 'current'
            ELSE 'ended' END AS status,
       events, a, r, b
ORDER BY type, valid_from, recorded_at;
