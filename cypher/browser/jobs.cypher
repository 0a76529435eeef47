// The background job queue of a namespace (namespace null: every namespace): what is queued,
// running, done or dead, how many attempts each took and the last error.
WITH null AS namespace, null AS status  // the inputs: edit them
MATCH (j:Job)
WHERE (namespace IS NULL OR j.namespace = namespace) AND (status IS NULL OR j.status = status)
RETURN j.status AS status, j.kind AS kind, j.namespace AS namespace, j.target AS target,
       j.attempts AS attempts, j.enqueued_at AS enqueued, j.started_at AS started, j.finished_at AS finished,
       j.next_attempt_at AS next_attempt, j.last_error AS last_error, j
ORDER BY coalesce(j.finished_at, j.started_at, j.enqueued_at) DESC
LIMIT 200;
