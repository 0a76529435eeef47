// Rule graduation: corrections on their way from correction -> pattern -> preference -> rule,
// with how often and over how long they were seen, the sessions they came from and what they
// are linked to (duplicate / related / supersedes / contradicts). Invalidated ones are shown
// with the reason when include_invalidated is true.
WITH 'demo-acme' AS namespace, false AS include_invalidated  // the inputs: edit them
MATCH (c:Correction)
WHERE c.namespace = namespace AND (include_invalidated OR c.invalidated_at IS NULL)
OPTIONAL MATCH (c)-[:FROM_SESSION]->(s:Session)
OPTIONAL MATCH (c)-[l:LINK]-(other:Correction)
WITH c, collect(DISTINCT s) AS sessions, collect(DISTINCT l) AS links, collect(DISTINCT other) AS linked
RETURN c.status AS status, c.rule_text AS rule, c.correction_type AS type,
       c.reinforcement_count AS reinforced, size(sessions) AS sessions_seen,
       c.first_seen_at AS first_seen, c.last_seen_at AS last_seen, c.confirmed_at AS confirmed,
       c.invalidated_at AS invalidated, c.invalidated_reason AS why_invalidated,
       [l IN links | l.type] AS link_types, c, sessions, linked
ORDER BY CASE c.status WHEN 'rule' THEN 0 WHEN 'preference' THEN 1 WHEN 'pattern' THEN 2 ELSE 3 END,
         reinforced DESC;
