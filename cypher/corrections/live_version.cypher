// The namespace's correction write counter (0 before the first write), read before a batch plans.
OPTIONAL MATCH (l:CorrectionLock {namespace: $namespace})
RETURN coalesce(l.version, 0) AS version
