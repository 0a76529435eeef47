// Copy-on-write: an edge version that no longer matches the timeline stops being believed at $at.
UNWIND $ids AS id
MATCH ()-[r:RELATES_TO {id: id}]->()
WHERE r.expired_at IS NULL
SET r.expired_at = $at
