// A session's turns in time order again (idx, the NEXT chain, its span and tail), after turns
// arrived out of order or sessions merged. Ties in time keep their earlier order.
UNWIND $sessions AS session_id
MATCH (s:Session {namespace: $namespace, id: session_id})
CALL (s) {
  MATCH (s)-[:HAS_TURN]->(:Turn)-[n:NEXT]->(:Turn)
  DELETE n
}
CALL (s) {
  MATCH (s)-[:HAS_TURN]->(t:Turn)
  WITH t ORDER BY t.ts, t.idx, t.id
  WITH collect(t) AS turns
  UNWIND range(0, size(turns) - 1) AS i
  WITH turns, i, turns[i] AS t
  SET t.idx = i
  WITH turns, i, t WHERE i > 0
  WITH turns[i - 1] AS p, t
  MERGE (p)-[:NEXT]->(t)
}
CALL (s) {
  MATCH (s)-[:HAS_TURN]->(t:Turn)
  WITH t ORDER BY t.idx
  WITH collect(t) AS turns
  RETURN size(turns) AS n, last(turns) AS tail, head(turns) AS first
}
SET s.message_count = n, s.last_turn_id = tail.id, s.started_at = first.ts, s.ended_at = tail.ts,
    s.vectors_at = datetime.realtime(), s.vectors_rev = coalesce(s.vectors_rev, 0) + 1
RETURN s.id AS id, n AS message_count
