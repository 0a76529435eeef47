// The job queue's depth for /metrics: jobs by kind and status, over every namespace (the metrics
// never label by namespace).
MATCH (j:Job)
RETURN j.kind AS kind, j.status AS status, count(j) AS jobs
