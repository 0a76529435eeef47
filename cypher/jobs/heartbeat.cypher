// Renew the lease of a running job; no row back: the lease was lost (expired and reclaimed).
MATCH (j:Job {id: $id})
WHERE j.status = 'running' AND j.claim = $claim
SET j.lease_until = datetime() + duration({milliseconds: $lease_ms})
RETURN j.id AS id
