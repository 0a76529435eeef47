// Quality and outcome of sessions, from their current session summary (a ranking signal).
UNWIND $ids AS id
MATCH (sm:Summary {kind: 'session'})-[:SUMMARIZES]->(:Session {namespace: $namespace, id: id})
  WHERE sm.expired_at IS NULL
RETURN id, sm.quality AS quality, sm.outcome AS outcome
