// Every live correction of a namespace with its vector and sessions, for the nightly job, and the
// corrections merged into a live one (through any chain of `duplicate` links): they still cluster
// with their survivor, so a rule's cluster keeps its paraphrases. Untrusted corrections stay out
// until confirmed: the job never merges, promotes or invalidates with them.
MATCH (c:Correction)
WHERE c.namespace = $namespace AND c.trust IS NULL
  AND (c.invalidated_at IS NULL
       OR (c.invalidated_reason = 'merged'
           AND EXISTS { MATCH (c)-[:LINK*1..10 {type: 'duplicate'}]->(s:Correction) WHERE s.invalidated_at IS NULL }))
RETURN c {.id, .rule_key, .rule_text, .status, .reinforcement_count, .confidence, .half_life_days,
          .first_seen_at, .last_seen_at, .confirmed_at, .embedding} AS correction,
       c.invalidated_at IS NOT NULL AS merged,
       COLLECT { MATCH (c)-[:FROM_SESSION]->(s:Session) RETURN s.id } AS session_ids
ORDER BY c.first_seen_at, c.id
