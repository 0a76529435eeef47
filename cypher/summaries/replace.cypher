// New summary versions, one per row of $rows ({namespace, session_id, props, id_prefix, children,
// embedding}): the current one of the row's slot (if any) is expired, kept, and linked from the new
// one by REPLACES; a rollup links the summaries it was made from by ROLLS_UP.
UNWIND $rows AS row
CALL (row) {
  MATCH (s:Session {namespace: row.namespace, id: row.session_id})
  OPTIONAL MATCH (old:Summary)-[:SUMMARIZES]->(s)
    WHERE old.slot = row.props.slot AND old.expired_at IS NULL
  WITH s, old
  CREATE (n:Summary)
  SET n = row.props, n.namespace = row.namespace, n.session_id = row.session_id,
      n.version = coalesce(old.version, 0) + 1, n.created_at = $now
  SET n.id = row.id_prefix + '-v' + toString(n.version)
  SET old.expired_at = $now
  CREATE (n)-[:SUMMARIZES]->(s)
  WITH n, old
  FOREACH (x IN CASE WHEN old IS NULL THEN [] ELSE [old] END | CREATE (n)-[:REPLACES]->(x))
  WITH n
  CALL (n, row) {
    UNWIND row.children AS child_id
    MATCH (c:Summary {id: child_id})
    CREATE (n)-[:ROLLS_UP]->(c)
  }
  WITH n
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
  RETURN n
}
RETURN row.namespace AS namespace, row.session_id AS session_id, n {.*, embedding: null} AS summary
