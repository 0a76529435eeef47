// The model that made each turn's vector: `kg reembed --fallback` and the reembed job page through the
// turns of the fallback model, and the start-up check counts them, by this index.
CREATE INDEX turn_embedding_model IF NOT EXISTS FOR (t:Turn) ON (t.embedding_model);
