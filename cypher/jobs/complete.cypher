// The job finished: final pass outputs, status done. No row: the lease was lost meanwhile.
MATCH (j:Job {id: $id})
WHERE j.status = 'running' AND j.claim = $claim
SET j.status = 'done', j.pass_outputs = $pass_outputs, j.finished_at = datetime(), j.last_error = null,
    j.lease_until = null, j.claim = null
RETURN j {.*} AS job
