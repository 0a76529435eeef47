// What graduation looks at, for one live correction.
MATCH (c:Correction {id: $id})
WHERE c.namespace = $namespace AND c.invalidated_at IS NULL
RETURN c {.id, .rule_key, .rule_text, .status, .reinforcement_count, .confidence, .half_life_days,
          .first_seen_at, .last_seen_at, .confirmed_at} AS correction
