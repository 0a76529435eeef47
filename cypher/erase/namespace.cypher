// Deletes every node of one namespace except its erasure records, in batches.
MATCH (n)
WHERE n.namespace = $namespace AND NOT n:Erasure
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
