// Namespaces that hold corrections (the nightly clustering and decay sweep).
MATCH (l:CorrectionLock)
WHERE $namespace IS NULL OR l.namespace = $namespace
RETURN l.namespace AS namespace
ORDER BY namespace
