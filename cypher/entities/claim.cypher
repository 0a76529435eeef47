// Write-lock the existing entities a batch is about to update (sorted by the caller) and return
// those changed since the batch read them: the caller then re-resolves the batch (optimistic
// concurrency on `version`; the lock makes the check and the later write one step).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.locked = true
REMOVE e.locked
WITH e, row
WHERE coalesce(e.version, 0) <> row.version
RETURN e.id AS id
