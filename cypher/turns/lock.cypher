// Create-or-lock the namespaces whose messages arrive without a session id (sorted by the caller):
// the SET takes the write lock, held to commit, so such writers of one namespace queue here.
UNWIND $namespaces AS namespace
MERGE (l:TurnLock {namespace: namespace})
  ON CREATE SET l.writes = 0
SET l.writes = l.writes + 1
RETURN count(l) AS locked
