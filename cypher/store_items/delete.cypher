// LangGraph store: delete items by id.
UNWIND $ids AS id
MATCH (i:StoreItem {id: id})
DETACH DELETE i
