// Idempotent enqueue: one node per (kind, namespace, target). A queued, running or dead job is
// left as it is; a done (or superseded) job is queued again only when `$rerun` (new work arrived for the target)
// and it finished before `$done_before` (a sweep passes the time it read what is due: a job that
// finished after that read may already have done the work). `before`: the status it had (null: new).
OPTIONAL MATCH (old:Job {id: $id})
WITH old.status AS before
MERGE (j:Job {id: $id})
  ON CREATE SET j.namespace = $namespace, j.kind = $kind, j.target = $target, j.params = $params,
                j.status = 'queued', j.attempts = 0, j.pass_outputs = '{}', j.enqueued_at = datetime(),
                j.next_attempt_at = datetime()
WITH j, before
CALL (j, before) {
  WITH j WHERE before IN ['done', 'superseded'] AND $rerun AND ($done_before IS NULL OR j.finished_at < $done_before)
  SET j.status = 'queued', j.attempts = 0, j.pass_outputs = '{}', j.params = $params, j.last_error = null,
      j.enqueued_at = datetime(), j.next_attempt_at = datetime(), j.started_at = null, j.finished_at = null
}
RETURN j {.*} AS job, before
