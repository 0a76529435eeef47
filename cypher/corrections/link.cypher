// `related` (and other) links between live corrections; idempotent.
UNWIND $links AS row
MATCH (a:Correction {id: row.from}), (b:Correction {id: row.to})
MERGE (a)-[l:LINK {type: row.type}]->(b)
SET l.similarity = row.similarity, l.created_at = row.at
