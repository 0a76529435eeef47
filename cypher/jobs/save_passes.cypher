// Record the outputs of the passes done so far (JSON), renewing the lease; no row: lease lost.
MATCH (j:Job {id: $id})
WHERE j.status = 'running' AND j.claim = $claim
SET j.pass_outputs = $pass_outputs, j.lease_until = datetime() + duration({milliseconds: $lease_ms})
RETURN j.id AS id
