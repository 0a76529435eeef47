// The session itself: its summaries (every version), decisions, the jobs that work on it (their
// saved passes hold extracted text), its turns (with their context keys and links) and the session.
MATCH (s:Session {namespace: $namespace, id: $session_id})
CALL (s) {
  OPTIONAL MATCH (m:Summary)-[:SUMMARIZES]->(s)
  DETACH DELETE m
  RETURN count(m) AS summaries
}
CALL (s) {
  OPTIONAL MATCH (d:Decision)-[:FROM_SESSION]->(s)
  DETACH DELETE d
  RETURN count(d) AS decisions
}
CALL () {
  OPTIONAL MATCH (j:Job {namespace: $namespace, target: $session_id})
  DETACH DELETE j
  RETURN count(j) AS jobs
}
CALL (s) {
  OPTIONAL MATCH (s)-[:HAS_TURN]->(t:Turn)
  DETACH DELETE t
  RETURN count(t) AS turns
}
DETACH DELETE s
RETURN summaries, decisions, jobs, turns
