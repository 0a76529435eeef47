// An entity made from untrusted content is marked so (an untrusted mention of a trusted entity is
// held instead: entity merges across trust levels wait for `confirm`); a trusted mention of it
// vouches for it and the mark goes (trust null).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.trust = row.trust
