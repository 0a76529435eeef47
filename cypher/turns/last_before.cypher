// Per namespace: the latest stored turn at or before a time (decides whether a message opens a new session).
UNWIND $probes AS probe
CALL (probe) {
  MATCH (t:Turn)
  WHERE t.namespace = probe.namespace AND t.ts <= probe.ts
  RETURN t ORDER BY t.ts DESC LIMIT 1
}
RETURN probe.namespace AS namespace, t.session_id AS session_id, t.ts AS ts
