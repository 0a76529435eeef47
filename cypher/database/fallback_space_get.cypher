// The fallback embedder the fallback vectors were made by ([embedding] fallback), and how many are left.
OPTIONAL MATCH (e:EmbeddingSpace {id: 'fallback'})
CALL (e) { MATCH (t:Turn) WHERE e IS NOT NULL AND t.embedding_model = e.model RETURN count(t) AS vectors }
RETURN e.model AS model, e.dim AS dim, vectors
