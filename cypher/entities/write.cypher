// Resolved entities of one batch. New ones are CREATEd: two resolvers picking one id collide
// on the entity_id constraint and the loser retries. Existing and adopted ones are updated.
// Keys and identifiers gained are linked; vectors go through entities/names_write.
UNWIND $entities AS row
CALL (row) {
  WITH row WHERE row.create
  CREATE (e:Entity {id: row.id})
  SET e.key = row.key, e.created_at = $now
  RETURN e
  UNION
  WITH row WHERE NOT row.create
  MATCH (e:Entity {id: row.id})
  SET e.key = coalesce(e.key, row.key), e.created_at = coalesce(e.created_at, $now)
  RETURN e
}
SET e += row.props, e.version = row.version + 1, e.updated_at = $now
WITH e, row
CALL (e, row) {
  UNWIND row.new_keys AS key
  MERGE (k:NameKey {namespace: e.namespace, type: e.type, key: key})
    ON CREATE SET k.created_at = $now
  MERGE (e)-[:HAS_KEY]->(k)
}
CALL (e, row) {
  UNWIND row.new_identifiers AS x
  MERGE (i:Identifier {namespace: e.namespace, kind: x.kind, value: x.value})
    ON CREATE SET i.created_at = $now
  MERGE (e)-[:IDENTIFIED_BY]->(i)
}
RETURN count(e) AS written
