// A session's timeline: its turns in order, who said what, and which facts and corrections each
// turn is evidence for (the fact versions believed now). Graph view: the turns (linked by NEXT) and what they support.
WITH 'demo-acme' AS namespace, 's-20250203T090000000Z' AS session_id  // the inputs: edit them
MATCH (s:Session {namespace: namespace, id: session_id})-[:HAS_TURN]->(t:Turn)
OPTIONAL MATCH (t)<-[:EVIDENCED_BY]-(x)
WHERE (x:Fact AND x.expired_at IS NULL) OR x:Correction
WITH s, t, collect(x) AS supported
RETURN t.idx AS idx, t.ts AS at, coalesce(t.speaker, t.role) AS who, t.text AS text,
       [x IN supported | coalesce(x.predicate + ' = ' + x.object_value, x.rule_text)] AS evidence_for,
       t AS turn, supported
ORDER BY idx;
