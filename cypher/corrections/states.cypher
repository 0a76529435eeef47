// What re-graduating a correction after an erase looks at: its stored state and when each session
// that still states it said it (reinforcement counts distinct sessions).
UNWIND $ids AS id
MATCH (c:Correction {id: id})
WHERE c.namespace = $namespace
RETURN c {.id, .status, .confidence, .half_life_days, .confirmed_at, .trust, .first_seen_at, .last_seen_at,
          .invalidated_at} AS correction,
       COLLECT { MATCH (c)-[r:FROM_SESSION]->(:Session) RETURN r.seen_at } AS seen
