// The packed token vectors (late interaction, kg.core.embedders.late) of some turns of a namespace, for the
// late list where the vector cache does not hold them (large namespaces); a turn without them is left out.
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.id IN $ids AND t.late_tokens IS NOT NULL
RETURN t.id AS id, t.late_tokens AS tokens
