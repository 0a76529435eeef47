// Embedded entity names per type in a namespace (small ones are searched exactly), and in all
// namespaces (from the count store: how much the global vector index must be over-fetched).
CALL () {
  MATCH (n:EntityName) RETURN count(n) AS total
}
MATCH (n:EntityName {namespace: $namespace})
RETURN n.type AS type, count(n) AS count, total
