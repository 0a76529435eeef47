// The new value's version points at the version whose interval its start ended.
UNWIND $links AS link
MATCH (newer:Fact {id: link.record_id})
MATCH (older:Fact {id: link.supersedes_id})
MERGE (newer)-[:SUPERSEDES]->(older)
