// Jobs for `kg jobs list`, newest first; every filter is optional.
MATCH (j:Job)
WHERE ($status IS NULL OR j.status = $status) AND ($kind IS NULL OR j.kind = $kind)
  AND ($namespace IS NULL OR j.namespace = $namespace)
RETURN j {.*} AS job
ORDER BY j.enqueued_at DESC
LIMIT $limit
