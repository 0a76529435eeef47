// A kept edge version's reinforcement count and evidence, as the replayed events imply them.
UNWIND $changes AS change
MATCH ()-[r:RELATES_TO {id: change.id}]->()
SET r.reinforcement_count = change.count, r.last_reinforced_at = change.last_reinforced_at,
    r.evidence = change.evidence, r.sessions = change.sessions
