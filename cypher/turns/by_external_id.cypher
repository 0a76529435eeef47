// Turns of a namespace by the caller's own message ids (imports link facts to their evidence).
MATCH (t:Turn)
WHERE t.namespace = $namespace AND t.external_id IN $external_ids
RETURN t.external_id AS external_id, t.id AS id
