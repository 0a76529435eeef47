// One tenant's rows in id order, a page at a time (`kg reembed --namespace`, an import's re-embedding):
// each page is a seek on (namespace, id) that reads the page alone, not every tenant's ids from
// $after on, nor the whole namespace sorted again for each page.
CREATE INDEX turn_namespace_id IF NOT EXISTS FOR (t:Turn) ON (t.namespace, t.id);
CREATE INDEX summary_namespace_id IF NOT EXISTS FOR (s:Summary) ON (s.namespace, s.id);
CREATE INDEX correction_namespace_id IF NOT EXISTS FOR (c:Correction) ON (c.namespace, c.id);
CREATE INDEX entity_name_namespace_id IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.id);
