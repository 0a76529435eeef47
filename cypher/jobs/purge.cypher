// `kg jobs purge`: delete finished jobs (of the given statuses) older than `$before`.
// Sought by the status index (finished jobs of $statuses); the optional namespace filters those.
MATCH (j:Job)
WHERE j.status IN $statuses AND coalesce(j.finished_at, j.enqueued_at) < $before
  AND ($namespace IS NULL OR j.namespace = $namespace)
DETACH DELETE j
RETURN count(*) AS deleted
