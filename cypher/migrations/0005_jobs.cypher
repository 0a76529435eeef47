// The job queue: job identity (deterministic from kind, namespace and target: enqueueing twice
// is one job), the claim lock every worker takes before picking a job (claims are serialized, so
// no job is handed out twice), and the index claims and `kg jobs list` filter on.
CREATE CONSTRAINT job_id IF NOT EXISTS FOR (j:Job) REQUIRE j.id IS UNIQUE;
CREATE CONSTRAINT job_lock_id IF NOT EXISTS FOR (l:JobLock) REQUIRE l.id IS UNIQUE;
CREATE INDEX job_status_due IF NOT EXISTS FOR (j:Job) ON (j.status, j.next_attempt_at);
CREATE INDEX job_namespace_kind IF NOT EXISTS FOR (j:Job) ON (j.namespace, j.kind);
MERGE (:JobLock {id: 'claim'});
