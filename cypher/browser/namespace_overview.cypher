// What one namespace holds: nodes per label, and the newest sessions with their first turns to
// click through from.
WITH 'demo-acme' AS namespace  // the inputs: edit them
CALL (namespace) {
  MATCH (n:Session {namespace: namespace}) RETURN 'Session' AS label, count(n) AS nodes
  UNION ALL MATCH (n:Turn) WHERE n.namespace = namespace RETURN 'Turn' AS label, count(n) AS nodes
  UNION ALL MATCH (n:Entity) WHERE n.namespace = namespace RETURN 'Entity' AS label, count(n) AS nodes
  UNION ALL MATCH (n:Fact) WHERE n.namespace = namespace RETURN 'Fact' AS label, count(n) AS nodes
  UNION ALL MATCH (n:Correction) WHERE n.namespace = namespace RETURN 'Correction' AS label, count(n) AS nodes
  UNION ALL MATCH (n:Summary) WHERE n.namespace = namespace RETURN 'Summary' AS label, count(n) AS nodes
  UNION ALL MATCH (n:Job) WHERE n.namespace = namespace RETURN 'Job' AS label, count(n) AS nodes
}
WITH namespace, collect({label: label, nodes: nodes}) AS counts
OPTIONAL MATCH (s:Session {namespace: namespace})
WITH counts, s ORDER BY s.started_at DESC LIMIT 5
OPTIONAL MATCH (s)-[:HAS_TURN]->(t:Turn) WHERE t.idx < 3
RETURN counts, s.id AS session, s.started_at AS started_at, s.message_count AS messages, s, collect(t) AS turns;
