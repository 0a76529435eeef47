// Meaning neighbours through the entity_embedding vector index, filtered inside the index to the
// namespace and the probe's type (Cypher 25 SEARCH). An entity has several names: $fetch names
// are read for $k entities.
CYPHER 25
UNWIND $probes AS p
CALL (p) {
  MATCH (node:EntityName)
    SEARCH node IN (VECTOR INDEX entity_embedding FOR p.vector
                    WHERE node.namespace = $namespace AND node.type = p.type
                    LIMIT $fetch) SCORE AS score
  WITH node.entity_id AS id, max(score) AS score
  ORDER BY score DESC, id
  LIMIT $k
  RETURN collect({id: id, score: score}) AS hits
}
RETURN p.i AS i, hits
