// The session a correction was stated in. A session not stored yet is created with what a
// correction knows: its namespace, id and the moment (turns ingested later widen its span).
MATCH (c:Correction {id: $id})
MERGE (s:Session {namespace: $namespace, id: $session_id})
  ON CREATE SET s.started_at = $seen_at, s.ended_at = $seen_at, s.status = 'open', s.message_count = 0,
                s.created_at = datetime()
MERGE (c)-[r:FROM_SESSION]->(s)
  ON CREATE SET r.seen_at = $seen_at
RETURN s.id AS session_id
