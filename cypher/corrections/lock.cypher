// Create-or-lock the namespace's correction lock: writers of one namespace queue here. `$bump`
// adds to the write counter (0 for a reader that only wants the lock and the counter).
MERGE (l:CorrectionLock {namespace: $namespace})
  ON CREATE SET l.version = 0
SET l.version = l.version + $bump
WITH l
CALL (l) {
  MATCH (c:Correction) WHERE c.namespace = l.namespace AND c.invalidated_at IS NULL
  RETURN count(c) AS live
}
RETURN l.version AS version, live
