// Kept, never deleted: the invalidated correction records when, why and by which correction; the
// winner links to it (`contradicts`, `supersedes`, or from the absorbed side `duplicate`).
UNWIND $rows AS row
MATCH (old:Correction {id: row.id}), (by:Correction {id: row.by})
SET old.invalidated_at = row.at, old.invalidated_reason = row.reason, old.invalidated_by = row.by,
    old.updated_at = datetime()
WITH old, by, row
CALL (old, by, row) {
  WITH old, by, row WHERE row.type <> 'duplicate'
  MERGE (by)-[l:LINK {type: row.type}]->(old)
  SET l.similarity = row.similarity, l.created_at = row.at
}
CALL (old, by, row) {
  WITH old, by, row WHERE row.type = 'duplicate'
  MERGE (old)-[l:LINK {type: 'duplicate'}]->(by)
  SET l.similarity = row.similarity, l.created_at = row.at
}
