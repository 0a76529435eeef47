// Jobs for `kg jobs list`, newest first; every filter is optional. $namespace given: its jobs are
// sought by index, not every tenant's.
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (j:Job {namespace: ns}) USING INDEX SEEK j:Job(namespace)
  WHERE ($status IS NULL OR j.status = $status) AND ($kind IS NULL OR j.kind = $kind)
  RETURN j ORDER BY j.enqueued_at DESC LIMIT $limit
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (j:Job)
  WHERE ($status IS NULL OR j.status = $status) AND ($kind IS NULL OR j.kind = $kind)
  RETURN j ORDER BY j.enqueued_at DESC LIMIT $limit
}
RETURN j {.*} AS job
ORDER BY j.enqueued_at DESC
