MATCH (e:EmbeddingSpace {id: 'default'})
RETURN e.model AS model, e.dim AS dim
