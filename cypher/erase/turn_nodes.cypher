// One turn of a session goes: the turn (with its keys and links), every summary version of its
// session (they were made from it; the session is summarized again after), the jobs on the session
// (their saved passes hold extracted text), and the session's context keys (they quote their
// neighbours: made again with the summary). Then the session's turns are numbered again
// (sessions/renumber) and its summary bookkeeping is reset, so the session is due again.
MATCH (s:Session {namespace: $namespace, id: $session_id})-[:HAS_TURN]->(t:Turn {id: $turn_id})
CALL (s) {
  OPTIONAL MATCH (m:Summary)-[:SUMMARIZES]->(s)
  DETACH DELETE m
  RETURN count(m) AS summaries
}
CALL (s) {
  OPTIONAL MATCH (j:Job {namespace: $namespace, target: s.id})
  DETACH DELETE j
  RETURN count(j) AS jobs
}
CALL (s, t) {
  MATCH (s)-[:HAS_TURN]->(o:Turn)
  WHERE o <> t AND o.context_text IS NOT NULL
  REMOVE o.context_text, o.context_embedding, o.context_model, o.follows_question
}
DETACH DELETE t
REMOVE s.summarized_count, s.summarized_at, s.summary_version
RETURN summaries, jobs
