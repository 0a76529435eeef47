// Claim the next due job of the given kinds (and namespace, if given), atomically. Every claimer first write-locks the one
// JobLock node, so claims run one at a time and each sees the previous claim committed: a job is
// never handed to two workers. `claim` is a fencing token: heartbeats, pass saves and the final
// status are only accepted from the holder of the current one.
// The queue is sought by its status index (queued jobs only), so `$namespace IS NULL OR` filters the
// queue, never the job history.
MERGE (l:JobLock {id: 'claim'})
SET l.claims = coalesce(l.claims, 0) + 1
WITH l
CALL (l) {
  MATCH (j:Job)
  WHERE j.status = 'queued' AND j.next_attempt_at <= datetime() AND j.kind IN $kinds
    AND ($namespace IS NULL OR j.namespace = $namespace)
  WITH j ORDER BY j.next_attempt_at, j.enqueued_at LIMIT 1
  SET j.status = 'running', j.worker = $worker, j.claim = randomUUID(), j.attempts = j.attempts + 1,
      j.started_at = datetime(), j.finished_at = null,
      j.lease_until = datetime() + duration({milliseconds: $lease_ms})
  RETURN j
}
RETURN j {.*} AS job
