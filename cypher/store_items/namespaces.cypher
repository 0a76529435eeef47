// LangGraph store: the distinct namespace tuples that hold items ($omit_expired: live items only).
MATCH (i:StoreItem {namespace: $namespace})
WHERE NOT $omit_expired OR i.expires_at IS NULL OR i.expires_at > datetime()
RETURN DISTINCT i.path AS path
ORDER BY path
