// Copy-on-write: a version that no longer matches the timeline stops being believed at $at.
MATCH (f:Fact)
WHERE f.id IN $ids AND f.expired_at IS NULL
SET f.expired_at = $at
