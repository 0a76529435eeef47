// Meaning neighbours by exact cosine over the namespace's embedded names of the probe's type.
UNWIND $probes AS p
CALL (p) {
  MATCH (n:EntityName {namespace: $namespace, type: p.type})
  WHERE size(n.embedding) = size(p.vector)  // a name not re-embedded yet after a model change is skipped
  WITH n.entity_id AS id, max(vector.similarity.cosine(n.embedding, p.vector)) AS score
  ORDER BY score DESC, id
  LIMIT $k
  RETURN collect({id: id, score: score}) AS hits
}
RETURN p.i AS i, hits
