// Reinforcement counts follow the events; they are not part of a version's identity.
UNWIND $changes AS change
MATCH (f:Fact {id: change.id})
SET f.reinforcement_count = change.count, f.last_reinforced_at = change.last_reinforced_at
