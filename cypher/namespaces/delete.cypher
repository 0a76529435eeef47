// Deletes every node of one namespace, in batches (tests and `kg purge`).
MATCH (n) WHERE n.namespace = $namespace
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
