// Summaries and what they summarize (sessions, or other summaries for rolling ones), newest
// sessions first. Properties of a Summary are shown whole, so the query survives new fields.
WITH 'demo-acme' AS namespace  // the inputs: edit them
MATCH (sm:Summary)-[:SUMMARIZES]->(x)
WHERE sm.namespace = namespace
OPTIONAL MATCH (x)-[:HAS_TURN]->(t:Turn)
WITH sm, x, count(t) AS turns
RETURN labels(x)[0] AS of, x.id AS id, x.started_at AS started_at, turns,
       sm {.*, embedding: null} AS summary, sm, x
ORDER BY started_at DESC
LIMIT 100;
