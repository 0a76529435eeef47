MERGE (e:EmbeddingSpace {id: 'fallback'})
SET e.model = $model, e.dim = $dim, e.updated_at = datetime()
