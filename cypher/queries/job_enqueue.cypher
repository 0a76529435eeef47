// Idempotent enqueue: one node per (kind, namespace, target). A queued, running or dead job is
// left as it is; a done job is queued again only when `$rerun` (new work arrived for the target).
// `before` is the status it had (null: created now).
OPTIONAL MATCH (old:Job {id: $id})
WITH old.status AS before
MERGE (j:Job {id: $id})
  ON CREATE SET j.namespace = $namespace, j.kind = $kind, j.target = $target, j.params = $params,
                j.status = 'queued', j.attempts = 0, j.pass_outputs = '{}', j.enqueued_at = datetime(),
                j.next_attempt_at = datetime()
WITH j, before
CALL (j, before) {
  WITH j WHERE before = 'done' AND $rerun
  SET j.status = 'queued', j.attempts = 0, j.pass_outputs = '{}', j.params = $params, j.last_error = null,
      j.enqueued_at = datetime(), j.next_attempt_at = datetime(), j.started_at = null, j.finished_at = null
}
RETURN j {.*} AS job, before
