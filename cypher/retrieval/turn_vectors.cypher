// The chosen turns' roles and vectors, as one row of [id, role, embedding, passage_embeddings]: the own
// key's first part, and a long turn's later parts flattened (null for a short turn).
UNWIND $ids AS id
MATCH (t:Turn {id: id})
RETURN collect([t.id, t.role, t.embedding, t.passage_embeddings]) AS turns
