// LangGraph store: items by id.
UNWIND $ids AS id
MATCH (i:StoreItem {id: id})
RETURN i.id AS id, i.path AS path, i.key AS key, i.value AS value, i.created_at AS created_at,
       i.updated_at AS updated_at
