// A namespace's erasure records, newest first.
MATCH (x:Erasure {namespace: $namespace})
RETURN x {.*} AS erasure
ORDER BY x.erased_at DESC
LIMIT $limit
