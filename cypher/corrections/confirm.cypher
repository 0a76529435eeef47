// An explicit confirmation by the user; returns nothing for an unknown or invalidated correction.
MATCH (c:Correction {id: $id})
WHERE c.namespace = $namespace AND c.invalidated_at IS NULL
SET c += $props, c.updated_at = datetime()
RETURN c.id AS id
