// Meaning neighbours through the entity_embedding vector index. The index spans every
// namespace, so it is over-fetched and filtered to the namespace and type.
UNWIND $probes AS p
CALL (p) {
  CALL db.index.vector.queryNodes('entity_embedding', $fetch, p.vector) YIELD node, score
  WHERE node.namespace = $namespace AND node.type = p.type
  WITH node.entity_id AS id, max(score) AS score
  ORDER BY score DESC, id
  LIMIT $k
  RETURN collect({id: id, score: score}) AS hits
}
RETURN p.i AS i, hits
