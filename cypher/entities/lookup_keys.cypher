// Entities holding any of a batch's name keys (per type) or identifiers: the exact, alias and
// attribute stages' candidates.
CALL {
  UNWIND $keys AS k
  MATCH (:NameKey {namespace: $namespace, type: k.type, key: k.key})<-[:HAS_KEY]-(e:Entity)
  RETURN 'key' AS by, k.type AS a, k.key AS b, collect(e.id) AS ids
  UNION ALL
  UNWIND $identifiers AS x
  MATCH (:Identifier {namespace: $namespace, kind: x.kind, value: x.value})<-[:IDENTIFIED_BY]-(e:Entity)
  RETURN 'identifier' AS by, x.kind AS a, x.value AS b, collect(e.id) AS ids
}
RETURN by, a, b, ids
