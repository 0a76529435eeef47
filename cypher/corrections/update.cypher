// Reinforcement, graduation and decay: the new counts, times, confidence and status.
UNWIND $rows AS row
MATCH (c:Correction {id: row.id})
SET c += row.props, c.updated_at = datetime()
