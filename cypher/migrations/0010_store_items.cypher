// The LangGraph store (kg.langgraph_store): one (:StoreItem) per namespace tuple and key, its id
// derived from the kg namespace, the tuple and the key; listed and searched per kg namespace.
CREATE CONSTRAINT store_item_id IF NOT EXISTS FOR (i:StoreItem) REQUIRE i.id IS UNIQUE;
CREATE INDEX store_item_namespace IF NOT EXISTS FOR (i:StoreItem) ON (i.namespace);
