// Namespaces that hold corrections (the nightly clustering and decay sweep): one lock per namespace,
// sought by its unique namespace when one is given.
CALL () {
  WITH $namespace AS ns WHERE ns IS NOT NULL
  MATCH (l:CorrectionLock {namespace: ns}) USING INDEX SEEK l:CorrectionLock(namespace)
  RETURN l
  UNION ALL
  WITH $namespace AS ns WHERE ns IS NULL
  MATCH (l:CorrectionLock)
  RETURN l
}
RETURN l.namespace AS namespace
ORDER BY namespace
