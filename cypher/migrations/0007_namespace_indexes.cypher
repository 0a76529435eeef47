// Single-property namespace indexes: Neo4j 5 seeks a composite index only when every one of its
// properties has a predicate, so queries that filter on the namespace alone (the tenant) would
// otherwise scan the whole label.
CREATE INDEX session_ns IF NOT EXISTS FOR (s:Session) ON (s.namespace);
CREATE INDEX turn_ns IF NOT EXISTS FOR (t:Turn) ON (t.namespace);
CREATE INDEX summary_ns IF NOT EXISTS FOR (s:Summary) ON (s.namespace);
CREATE INDEX entity_ns IF NOT EXISTS FOR (e:Entity) ON (e.namespace);
CREATE INDEX entity_name_ns IF NOT EXISTS FOR (n:EntityName) ON (n.namespace);
CREATE INDEX fact_ns IF NOT EXISTS FOR (f:Fact) ON (f.namespace);
CREATE INDEX correction_ns IF NOT EXISTS FOR (c:Correction) ON (c.namespace);
CREATE INDEX job_ns IF NOT EXISTS FOR (j:Job) ON (j.namespace);
