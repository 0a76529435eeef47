MERGE (m:Migration {id: $id})
SET m.checksum = $checksum, m.applied_at = datetime()
