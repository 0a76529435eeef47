// LangGraph store: items by id; with $omit_expired, not those past their expiry.
UNWIND $ids AS id
MATCH (i:StoreItem {id: id})
WHERE NOT $omit_expired OR i.expires_at IS NULL OR i.expires_at > datetime()
RETURN i.id AS id, i.path AS path, i.key AS key, i.value AS value, i.created_at AS created_at,
       i.updated_at AS updated_at, i.ttl_ms AS ttl_ms
