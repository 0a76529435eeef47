// A handler found its target gone, replaced by later input (a session renamed or merged by a later
// message): the job ends `superseded`, with the reason, instead of failing. Only the claim holder.
MATCH (j:Job {id: $id})
WHERE j.status = 'running' AND j.claim = $claim
SET j.status = 'superseded', j.last_error = $reason, j.pass_outputs = $pass_outputs,
    j.finished_at = datetime(), j.lease_until = null, j.claim = null
RETURN j {.*} AS job
