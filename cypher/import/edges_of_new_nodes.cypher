// `kg import ndjson`: one batch of exported relationships of which one node at least this import
// made: none of them can be there yet, so they are made without looking (all of a first import's).
// Not looking also spares a first import into an empty database the plan the statistics of one would
// give import/edges (a scan of every relationship, for each row, while the database fills).
UNWIND $rows AS row
MATCH (a) WHERE elementId(a) = row.start
MATCH (b) WHERE elementId(b) = row.end
CREATE (a)-[m:$(row.type)]->(b)
SET m = row.props
RETURN count(m) AS created
