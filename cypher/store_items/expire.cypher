// LangGraph store, the TTL sweep: delete up to $limit items past their expiry (of kg namespace
// $namespace, or of every namespace when it is null).
// Sought by the expiry index (expired items only), so the optional namespace filters those.
MATCH (i:StoreItem)
WHERE i.expires_at < datetime() AND ($namespace IS NULL OR i.namespace = $namespace)
WITH i LIMIT $limit
DETACH DELETE i
RETURN count(*) AS deleted
