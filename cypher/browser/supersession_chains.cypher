// Supersession chains: for each subject+predicate, the values in the order they replaced each
// other (newest first), as currently believed. Graph view: (newer)-[:SUPERSEDES]->(older) paths
// with their subject. Versions belief has since replaced (expired_at set) are left out.
WITH 'demo-acme' AS namespace, null AS predicate  // the inputs: edit them
MATCH p = (newest:Fact)-[:SUPERSEDES*1..20]->(oldest:Fact)
WHERE newest.namespace = namespace AND (predicate IS NULL OR newest.predicate = predicate)
  AND all(f IN nodes(p) WHERE f.expired_at IS NULL)
  AND NOT EXISTS { MATCH (n:Fact)-[:SUPERSEDES]->(newest) WHERE n.expired_at IS NULL }
  AND NOT EXISTS { MATCH (oldest)-[:SUPERSEDES]->(o:Fact) WHERE o.expired_at IS NULL }
MATCH (newest)-[:SUBJECT]->(e:Entity)
RETURN e.name AS subject, newest.predicate AS predicate,
       [f IN nodes(p) | f.object_value + ' from ' + toString(date(f.valid_from))] AS chain,
       length(p) AS replacements, p, e
ORDER BY replacements DESC, subject
LIMIT 100;
