// LangGraph store: write items (create or replace the value; created_at kept).
UNWIND $items AS item
MERGE (i:StoreItem {id: item.id})
ON CREATE SET i.namespace = $namespace, i.path = item.path, i.key = item.key, i.created_at = $now
SET i.value = item.value, i.text = item.text, i.embedding = item.embedding, i.updated_at = $now
