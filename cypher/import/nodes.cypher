// `kg import ndjson`: one batch of exported nodes into $namespace. A node already there (same first
// label, same values of $row.keys) is kept as it is, so importing a file twice writes nothing.
// A vector (row.vectors) is stored as the writers store it (a float32 vector property). Returns each
// row's node, found or created, for the relationships that follow.
UNWIND $rows AS row
CALL (row) {
  OPTIONAL MATCH (n:$(row.labels[0]))
  WHERE n.namespace = $namespace AND all(key IN row.keys WHERE n[key] = row.props[key])
  WITH row, head(collect(n)) AS found
  OPTIONAL CALL (row, found) {
    WITH row WHERE found IS NULL
    CREATE (m:$(row.labels))
    SET m = row.props, m.namespace = $namespace
    WITH m, row
    CALL (m, row) {
      UNWIND keys(row.vectors) AS key
      CALL db.create.setNodeVectorProperty(m, key, row.vectors[key])
    }
    RETURN m
  }
  RETURN coalesce(found, m) AS node, found IS NULL AS created
}
RETURN row.ref AS ref, elementId(node) AS node, created
