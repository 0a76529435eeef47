// Re-segmentation (ingest.turns): the automatic sessions $sources of $namespace become one session
// named $target, named after its first message. A late earlier message moved a session's start, or
// a message bridged two sessions. The node kept is the one already named $target, else the earliest;
// the others' turns, summaries and corrections move to it and they are deleted, their current
// summaries expired (they described part of the session). Every node that names a merged session by
// id follows. sessions/renumber then rebuilds the turn order.
MATCH (s:Session {namespace: $namespace}) WHERE s.id IN $sources
WITH s ORDER BY CASE WHEN s.id = $target THEN 0 ELSE 1 END, s.started_at
WITH collect(s) AS found
WITH head(found) AS keep, tail(found) AS others
CALL (keep, others) {
  UNWIND others AS o
  MATCH (o)-[r:HAS_TURN]->(t:Turn)
  MERGE (keep)-[:HAS_TURN]->(t)
  DELETE r
}
CALL (keep, others) {
  UNWIND others AS o
  MATCH (x:Summary)-[r:SUMMARIZES]->(o)
  CREATE (x)-[:SUMMARIZES]->(keep)
  SET x.expired_at = coalesce(x.expired_at, datetime.realtime())
  DELETE r
}
CALL (keep, others) {
  UNWIND others AS o
  MATCH (x)-[r:FROM_SESSION]->(o)
  MERGE (x)-[n:FROM_SESSION]->(keep)
  SET n += properties(r)
  DELETE r
}
CALL (keep, others) {
  UNWIND others AS o
  WITH keep, min(o.started_at) AS started, max(o.ended_at) AS ended, collect(o.status) AS statuses
  SET keep.started_at = CASE WHEN started < keep.started_at THEN started ELSE keep.started_at END,
      keep.ended_at = CASE WHEN ended > keep.ended_at THEN ended ELSE keep.ended_at END,
      keep.status = CASE WHEN 'open' IN statuses THEN 'open' ELSE keep.status END
}
CALL (others) {
  UNWIND others AS o
  DETACH DELETE o
}
SET keep.id = $target, keep.updated_at = datetime()
WITH keep
CALL (keep) {
  MATCH (keep)-[:HAS_TURN]->(t:Turn) WHERE t.session_id IN $sources
  SET t.session_id = $target
  WITH t
  MATCH (t)-[m:MENTIONS]->() WHERE m.session_id IN $sources
  SET m.session_id = $target
}
CALL () {
  MATCH (n:Summary {namespace: $namespace}) WHERE n.session_id IN $sources
  SET n.session_id = $target
}
CALL () {
  MATCH (n:FactEvent {namespace: $namespace}) WHERE n.session_id IN $sources
  SET n.session_id = $target
}
CALL () {
  MATCH (n:RelationEvent {namespace: $namespace}) WHERE n.session_id IN $sources
  SET n.session_id = $target
}
RETURN keep.id AS id
