// LangGraph store: items just read with refresh_ttl. Those with a TTL that have not expired yet live
// another TTL from now; an expired item is not brought back.
UNWIND $ids AS id
MATCH (i:StoreItem {id: id})
WHERE i.ttl_ms IS NOT NULL AND i.expires_at > datetime()
SET i.expires_at = datetime() + duration({milliseconds: i.ttl_ms})
