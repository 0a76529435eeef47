// Entity resolution and post-session indexing. Entities themselves are identified by `id`
// (0002); the resolver finds them through NameKey nodes (exact and alias keys of their names,
// unique per namespace and type: the lock concurrent resolvers of one new name queue on) and
// Identifier nodes (normalized e-mail, phone, order id, domain), through the `entity_names`
// fulltext index for spelling neighbours and through EntityName vectors (`entity_embedding`,
// schema/vector_indexes.cypher) for meaning neighbours.
CREATE CONSTRAINT name_key_key IF NOT EXISTS FOR (k:NameKey) REQUIRE (k.namespace, k.type, k.key) IS UNIQUE;
CREATE CONSTRAINT identifier_key IF NOT EXISTS FOR (i:Identifier) REQUIRE (i.namespace, i.kind, i.value) IS UNIQUE;
CREATE CONSTRAINT entity_name_id IF NOT EXISTS FOR (n:EntityName) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT decision_id IF NOT EXISTS FOR (d:Decision) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT relates_to_id IF NOT EXISTS FOR ()-[r:RELATES_TO]-() REQUIRE r.id IS UNIQUE;
CREATE INDEX entity_namespace_type IF NOT EXISTS FOR (e:Entity) ON (e.namespace, e.type);
CREATE INDEX entity_name_namespace_type IF NOT EXISTS FOR (n:EntityName) ON (n.namespace, n.type);
CREATE INDEX decision_namespace IF NOT EXISTS FOR (d:Decision) ON (d.namespace);
CREATE INDEX session_extraction IF NOT EXISTS FOR (s:Session) ON (s.extraction_status);
// `search_scope` is one token per namespace+type, so a query can require it ("+search_scope:s..").
CREATE FULLTEXT INDEX entity_names IF NOT EXISTS FOR (e:Entity) ON EACH [e.search_names, e.search_scope]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words'}};
