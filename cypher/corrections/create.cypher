// A new correction with its embedding (stored as a float32 vector).
CREATE (c:Correction)
SET c = $props, c.created_at = datetime(), c.updated_at = datetime()
WITH c
CALL db.create.setNodeVectorProperty(c, 'embedding', $embedding)
RETURN c.id AS id
