// Every live correction of a namespace with its vector and sessions, for the nightly job.
MATCH (c:Correction)
WHERE c.namespace = $namespace AND c.invalidated_at IS NULL
RETURN c {.id, .rule_key, .rule_text, .status, .reinforcement_count, .confidence, .half_life_days,
          .first_seen_at, .last_seen_at, .confirmed_at, .embedding} AS correction,
       COLLECT { MATCH (c)-[:FROM_SESSION]->(s:Session) RETURN s.id } AS session_ids
ORDER BY c.first_seen_at, c.id
