// The most reinforced clusters of a namespace: reinforcement summed over live members (a merged
// correction's sessions already count for its survivor).
MATCH (k:CorrectionCluster)-[:HAS_MEMBER]->(c:Correction)
WHERE k.namespace = $namespace AND c.invalidated_at IS NULL
WITH k, count(c) AS members, sum(c.reinforcement_count) AS reinforcement, collect(DISTINCT c.status) AS statuses
ORDER BY reinforcement DESC, members DESC, k.label
LIMIT $limit
RETURN k {.id, .namespace, .label, .keyphrases, .representative} AS cluster, members, reinforcement, statuses
