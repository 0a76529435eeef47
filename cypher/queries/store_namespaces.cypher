// LangGraph store: the distinct namespace tuples that hold items.
MATCH (i:StoreItem {namespace: $namespace})
RETURN DISTINCT i.path AS path
ORDER BY path
