// Create-or-lock the identifiers and exact name keys a batch of mentions resolves by (sorted by
// the caller, so concurrent resolvers lock in one order). The SET takes the write lock, held to
// commit: a second resolver of the same new name waits here, then reads the first one's entity.
CALL {
  UNWIND $identifiers AS x
  MERGE (i:Identifier {namespace: $namespace, kind: x.kind, value: x.value})
    ON CREATE SET i.created_at = datetime()
  SET i.locked = true
  REMOVE i.locked
}
CALL {
  UNWIND $keys AS k
  MERGE (n:NameKey {namespace: $namespace, type: k.type, key: k.key})
    ON CREATE SET n.created_at = datetime()
  SET n.locked = true
  REMOVE n.locked
}
RETURN 1 AS locked
