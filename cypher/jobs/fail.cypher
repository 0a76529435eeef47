// An attempt failed: back to the queue after `$delay_ms` (exponential backoff), or dead-lettered.
// The outputs of the passes that did finish stay: the next attempt resumes after them.
MATCH (j:Job {id: $id})
WHERE j.status = 'running' AND j.claim = $claim
SET j.status = CASE WHEN $dead THEN 'dead' ELSE 'queued' END,
    j.last_error = $error, j.pass_outputs = $pass_outputs,
    j.next_attempt_at = datetime() + duration({milliseconds: $delay_ms}),
    j.finished_at = CASE WHEN $dead THEN datetime() ELSE null END,
    j.lease_until = null, j.claim = null
RETURN j {.*} AS job
