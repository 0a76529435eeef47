MERGE (e:EmbeddingSpace {id: 'default'})
SET e.model = $model, e.dim = $dim, e.updated_at = datetime()
