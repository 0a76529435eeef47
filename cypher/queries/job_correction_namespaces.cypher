// Namespaces that hold corrections (the nightly clustering and decay sweep).
MATCH (l:CorrectionLock)
RETURN l.namespace AS namespace
ORDER BY namespace
