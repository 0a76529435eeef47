// The LangGraph store keeps one vector per indexed text (a field, or each element a path like
// "tags[*]" reaches): the vectors in one flat list `vectors` of `dims`-long runs, the texts in `texts`.
// Items written before hold one `embedding` of one `text`: they become a run of one. TTL: `expires_at`,
// indexed for the sweep that deletes what has expired.
MATCH (i:StoreItem) WHERE i.embedding IS NOT NULL
SET i.vectors = i.embedding, i.dims = size(i.embedding), i.texts = [i.text]
REMOVE i.embedding, i.text;
MATCH (i:StoreItem) WHERE i.text IS NOT NULL REMOVE i.text;
CREATE INDEX store_item_expires IF NOT EXISTS FOR (i:StoreItem) ON (i.expires_at);
