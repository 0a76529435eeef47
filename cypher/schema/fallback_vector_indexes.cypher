// The fallback embedder's own vector index ([embedding] fallback, $dim: its dimension): turns embedded
// while the primary was down keep their vector in fallback_embedding, never beside the primary's vectors,
// which are of another model. Applied at start-up when a fallback is configured (idempotent).
CREATE VECTOR INDEX turn_fallback_embedding IF NOT EXISTS FOR (t:Turn) ON t.fallback_embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine'}};
