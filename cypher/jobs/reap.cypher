// Running jobs whose lease expired (their worker crashed, was killed or lost the database) go
// back to the queue, or to the dead letters when they have used up their attempts.
MATCH (j:Job {status: 'running'})
WHERE j.lease_until < datetime()
SET j.status = CASE WHEN j.attempts >= $max_attempts THEN 'dead' ELSE 'queued' END,
    j.last_error = 'lease expired on worker ' + coalesce(j.worker, '?') + ' (crashed, killed or cut off)',
    j.next_attempt_at = datetime(), j.lease_until = null, j.claim = null,
    j.finished_at = CASE WHEN j.attempts >= $max_attempts THEN datetime() ELSE null END
RETURN j.id AS id, j.status AS status
