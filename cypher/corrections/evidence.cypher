// Turns of the same namespace that show the correction; unknown ids are skipped.
MATCH (c:Correction {id: $id})
UNWIND $turn_ids AS turn_id
MATCH (t:Turn {id: turn_id})
WHERE t.namespace = c.namespace
MERGE (c)-[:EVIDENCED_BY]->(t)
RETURN count(t) AS linked
