// LangGraph store: write items (create, or replace the value, its vectors and its TTL; created_at kept).
// A TTL (`ttl_ms`) sets the expiry from now; none, no expiry.
UNWIND $items AS item
MERGE (i:StoreItem {id: item.id})
ON CREATE SET i.namespace = $namespace, i.path = item.path, i.key = item.key, i.created_at = datetime()
SET i.value = item.value, i.texts = item.texts, i.vectors = item.vectors, i.dims = item.dims,
    i.ttl_ms = item.ttl_ms, i.updated_at = datetime(),
    i.expires_at = CASE WHEN item.ttl_ms IS NULL THEN null ELSE datetime() + duration({milliseconds: item.ttl_ms}) END
