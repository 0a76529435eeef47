// The fallback embedder's index on a server with in-index filtering (schema/vector_indexes.cypher25).
CYPHER 25 CREATE VECTOR INDEX turn_fallback_embedding IF NOT EXISTS FOR (t:Turn) ON t.fallback_embedding WITH [t.namespace, t.ts]
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false,
    `vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200}};
