// The store TTL sweep: the kg namespaces holding LangGraph store items past their expiry.
// Sought by the expiry index (expired items only), so the optional namespace filters those.
MATCH (i:StoreItem)
WHERE i.expires_at < datetime() AND ($namespace IS NULL OR i.namespace = $namespace)
RETURN DISTINCT i.namespace AS namespace
