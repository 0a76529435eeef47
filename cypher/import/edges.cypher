// `kg import ndjson`: one batch of exported relationships between nodes that were there before this
// import (element ids; import/edges_of_new_nodes makes those of the nodes it made). An edge already
// there (same type and ends, same values of $row.keys) is kept, so a re-import writes nothing. It is looked for between the two nodes with the type as a filter: 5.26 plans a
// type given as a value in the pattern (`-[r:$(row.type)]->`) as a scan of every relationship of the
// database; row.type is one of kg.core.models.export.TYPES, the import refuses the others.
UNWIND $rows AS row
MATCH (a) WHERE elementId(a) = row.start
MATCH (b) WHERE elementId(b) = row.end
CALL (row, a, b) {
  OPTIONAL MATCH (a)-[r]->(b)
  WHERE type(r) = row.type AND all(key IN row.keys WHERE r[key] = row.props[key])
  WITH row, a, b, count(r) AS present
  CALL (row, a, b, present) {
    WITH row, a, b WHERE present = 0
    CREATE (a)-[m:$(row.type)]->(b)
    SET m = row.props
    RETURN count(m) AS made
  }
  RETURN made
}
RETURN sum(made) AS created
