// Possible duplicates: entities of one namespace that share a name key (exact or alias key,
// HAS_KEY -> NameKey), an identifier (IDENTIFIED_BY -> Identifier: e-mail, phone, order id,
// domain) or the same normalized name. Each row is one cluster; the graph view shows the
// entities around the key or identifier they share.
WITH 'demo-acme' AS namespace  // the inputs: edit them
CALL (namespace) {
  MATCH (k:NameKey {namespace: namespace})<-[:HAS_KEY]-(e:Entity)
  WITH k, collect(e) AS entities WHERE size(entities) > 1
  RETURN 'name key' AS shared, k.type + ':' + k.key AS value, entities, k AS via
  UNION
  MATCH (i:Identifier {namespace: namespace})<-[:IDENTIFIED_BY]-(e:Entity)
  WITH i, collect(e) AS entities WHERE size(entities) > 1
  RETURN 'identifier' AS shared, i.kind + ':' + i.value AS value, entities, i AS via
  UNION
  MATCH (e:Entity {namespace: namespace})
  WITH e.key AS key, collect(e) AS entities WHERE key IS NOT NULL AND size(entities) > 1
  RETURN 'same name' AS shared, key AS value, entities, null AS via
}
RETURN shared, value, size(entities) AS size, [e IN entities | e.name + ' (' + coalesce(e.type, '?') + ')'] AS names,
       entities, via
ORDER BY size DESC, shared, value
LIMIT 200;
