// Work still outstanding for the given kinds: queued (now or later) and running, and when the
// earliest of them may next be claimed.
// Sought by the status index (queued and running jobs), so the optional namespace filters the queue only.
MATCH (j:Job)
WHERE j.status IN ['queued', 'running'] AND j.kind IN $kinds AND ($namespace IS NULL OR j.namespace = $namespace)
RETURN count(j) AS pending,
       min(CASE WHEN j.status = 'queued' THEN j.next_attempt_at ELSE j.lease_until END) AS next_at
