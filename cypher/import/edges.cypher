// `kg import ndjson`: one batch of exported relationships between imported nodes (element ids). An
// edge already there (same type and ends, same values of $row.keys) is kept, so a re-import
// writes nothing.
UNWIND $rows AS row
MATCH (a) WHERE elementId(a) = row.start
MATCH (b) WHERE elementId(b) = row.end
CALL (row, a, b) {
  OPTIONAL MATCH (a)-[r:$(row.type)]->(b)
  WHERE all(key IN row.keys WHERE r[key] = row.props[key])
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
